from .r6_1 import run
