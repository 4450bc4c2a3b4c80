from .r11_9 import run
