from .r9_1 import run
