from .r3 import v
