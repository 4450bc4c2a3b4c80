from .r14 import v
