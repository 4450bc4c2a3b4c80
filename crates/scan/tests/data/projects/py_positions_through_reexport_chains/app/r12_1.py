from .r12_2 import run
