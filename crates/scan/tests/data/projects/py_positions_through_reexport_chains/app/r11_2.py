from .r11_3 import run
