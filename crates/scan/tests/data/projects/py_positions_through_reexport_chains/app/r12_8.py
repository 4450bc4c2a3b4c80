from .r12_9 import run
