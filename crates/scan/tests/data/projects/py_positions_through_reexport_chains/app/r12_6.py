from .r12_7 import run
