from .r2_2 import run
