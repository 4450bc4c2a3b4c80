from .r8 import v
