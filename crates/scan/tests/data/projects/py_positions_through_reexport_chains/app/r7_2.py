from .r7_3 import run
