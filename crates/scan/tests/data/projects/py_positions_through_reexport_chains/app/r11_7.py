from .r11_8 import run
