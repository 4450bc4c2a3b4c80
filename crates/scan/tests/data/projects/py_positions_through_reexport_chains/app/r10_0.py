from .r10_1 import run
