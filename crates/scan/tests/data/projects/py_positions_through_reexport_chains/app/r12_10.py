from .r12_11 import run
