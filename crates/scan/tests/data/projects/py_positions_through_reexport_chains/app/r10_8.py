from .r10_9 import run
