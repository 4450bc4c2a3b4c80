from .r9_5 import run
