from .r13_11 import run
