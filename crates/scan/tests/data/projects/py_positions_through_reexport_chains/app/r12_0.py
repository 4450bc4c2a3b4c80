from .r12_1 import run
