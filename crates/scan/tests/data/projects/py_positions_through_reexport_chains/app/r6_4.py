from .r6_5 import run
