from .r1_1 import run
