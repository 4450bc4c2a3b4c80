from .r10_5 import run
