from .r5_2 import run
