from .r6_6 import run
