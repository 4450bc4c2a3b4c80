from .r13_2 import run
