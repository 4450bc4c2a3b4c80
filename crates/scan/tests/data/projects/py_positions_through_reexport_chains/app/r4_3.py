from .r4_4 import run
