from .r13_10 import run
