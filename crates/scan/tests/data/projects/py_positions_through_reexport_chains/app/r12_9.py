from .r12_10 import run
