from .r1 import v
