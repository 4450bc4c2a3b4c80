from .r13_12 import run
