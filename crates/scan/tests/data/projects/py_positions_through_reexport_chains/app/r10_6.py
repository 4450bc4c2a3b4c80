from .r10_7 import run
