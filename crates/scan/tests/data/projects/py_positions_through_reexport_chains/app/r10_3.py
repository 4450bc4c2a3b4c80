from .r10_4 import run
