from .r6_3 import run
