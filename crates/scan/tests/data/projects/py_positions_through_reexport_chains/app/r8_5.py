from .r8_6 import run
