from .r5_5 import run
