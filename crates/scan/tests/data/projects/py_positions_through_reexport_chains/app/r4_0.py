from .r4_1 import run
