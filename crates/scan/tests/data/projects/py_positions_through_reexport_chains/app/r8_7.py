from .r8_8 import run
