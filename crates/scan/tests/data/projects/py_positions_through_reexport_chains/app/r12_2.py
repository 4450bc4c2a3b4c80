from .r12_3 import run
