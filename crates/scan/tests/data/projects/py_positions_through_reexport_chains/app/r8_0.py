from .r8_1 import run
