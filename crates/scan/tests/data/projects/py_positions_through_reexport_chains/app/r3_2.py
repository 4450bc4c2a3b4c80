from .r3_3 import run
