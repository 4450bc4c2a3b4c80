from .r8_4 import run
