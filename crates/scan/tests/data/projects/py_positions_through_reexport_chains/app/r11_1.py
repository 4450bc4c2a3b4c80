from .r11_2 import run
