from .r10_3 import run
