from .r12_12 import run
