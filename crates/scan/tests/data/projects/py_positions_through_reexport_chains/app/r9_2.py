from .r9_3 import run
