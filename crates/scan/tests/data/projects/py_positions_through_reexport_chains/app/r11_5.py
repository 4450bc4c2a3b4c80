from .r11_6 import run
