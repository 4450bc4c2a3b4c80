from .r13_9 import run
