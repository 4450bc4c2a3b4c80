from .r7_4 import run
