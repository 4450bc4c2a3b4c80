from .r13_5 import run
