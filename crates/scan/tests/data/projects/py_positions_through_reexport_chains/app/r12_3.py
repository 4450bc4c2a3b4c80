from .r12_4 import run
