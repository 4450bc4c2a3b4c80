from .r11_7 import run
