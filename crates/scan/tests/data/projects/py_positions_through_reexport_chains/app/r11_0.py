from .r11_1 import run
