from .r6_4 import run
