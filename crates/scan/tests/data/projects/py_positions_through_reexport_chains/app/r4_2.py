from .r4_3 import run
