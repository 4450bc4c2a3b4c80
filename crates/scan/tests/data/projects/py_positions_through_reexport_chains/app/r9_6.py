from .r9_7 import run
