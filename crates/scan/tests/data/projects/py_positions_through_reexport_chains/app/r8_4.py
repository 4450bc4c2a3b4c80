from .r8_5 import run
