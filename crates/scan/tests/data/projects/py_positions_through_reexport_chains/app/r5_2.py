from .r5_3 import run
