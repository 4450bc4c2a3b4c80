from .r9_2 import run
