from .r10_8 import run
