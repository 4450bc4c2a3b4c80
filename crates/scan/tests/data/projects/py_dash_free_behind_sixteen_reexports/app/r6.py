from .r7 import v
