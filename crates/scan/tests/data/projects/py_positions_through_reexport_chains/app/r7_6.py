from .r7_7 import run
