from .r4_2 import run
