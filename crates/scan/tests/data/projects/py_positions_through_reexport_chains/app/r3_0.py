from .r3_1 import run
