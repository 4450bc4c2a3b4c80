from .r12_8 import run
