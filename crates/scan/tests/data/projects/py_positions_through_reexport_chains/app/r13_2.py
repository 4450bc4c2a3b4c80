from .r13_3 import run
