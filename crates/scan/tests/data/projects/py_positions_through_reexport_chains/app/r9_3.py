from .r9_4 import run
