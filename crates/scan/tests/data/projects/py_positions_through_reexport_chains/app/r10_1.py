from .r10_2 import run
