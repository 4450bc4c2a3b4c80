from .r7_5 import run
