from .r8_7 import run
