from .r7_2 import run
