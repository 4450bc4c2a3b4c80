from .r11_5 import run
