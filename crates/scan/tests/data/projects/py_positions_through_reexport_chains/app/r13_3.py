from .r13_4 import run
