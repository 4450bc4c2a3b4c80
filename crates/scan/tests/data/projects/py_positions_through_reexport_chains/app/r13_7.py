from .r13_8 import run
