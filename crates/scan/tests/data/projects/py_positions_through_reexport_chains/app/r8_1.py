from .r8_2 import run
