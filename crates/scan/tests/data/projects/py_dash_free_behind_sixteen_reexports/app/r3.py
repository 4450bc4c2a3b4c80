from .r4 import v
