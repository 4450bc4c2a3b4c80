from .r6_2 import run
