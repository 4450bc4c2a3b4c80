from .r11_10 import run
