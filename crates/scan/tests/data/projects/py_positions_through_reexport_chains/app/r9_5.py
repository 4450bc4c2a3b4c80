from .r9_6 import run
