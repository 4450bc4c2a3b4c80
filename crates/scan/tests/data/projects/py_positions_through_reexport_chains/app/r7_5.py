from .r7_6 import run
