from .r13 import v
