from .r8_3 import run
