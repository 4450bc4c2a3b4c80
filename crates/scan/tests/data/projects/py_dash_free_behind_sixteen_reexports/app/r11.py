from .r12 import v
