from .r11 import v
