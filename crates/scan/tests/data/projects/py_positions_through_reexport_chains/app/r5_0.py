from .r5_1 import run
