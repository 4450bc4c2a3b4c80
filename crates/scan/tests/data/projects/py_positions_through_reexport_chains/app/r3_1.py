from .r3_2 import run
