from .r11_4 import run
