from .r13_1 import run
