from .r12_5 import run
