from .r10 import v
