from .r11_11 import run
