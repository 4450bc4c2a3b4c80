from .r12_6 import run
