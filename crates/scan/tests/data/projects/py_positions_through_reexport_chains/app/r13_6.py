from .r13_7 import run
