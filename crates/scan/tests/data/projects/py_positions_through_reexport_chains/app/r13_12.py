from .r13_13 import run
