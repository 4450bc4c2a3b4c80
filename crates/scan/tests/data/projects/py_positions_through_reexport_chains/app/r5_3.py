from .r5_4 import run
