from .r10_6 import run
