from .r9_9 import run
