from .r10_10 import run
