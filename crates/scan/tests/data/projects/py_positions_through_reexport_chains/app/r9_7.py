from .r9_8 import run
