from .r2_1 import run
