from .r13_6 import run
