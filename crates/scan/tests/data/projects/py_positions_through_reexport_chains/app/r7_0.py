from .r7_1 import run
