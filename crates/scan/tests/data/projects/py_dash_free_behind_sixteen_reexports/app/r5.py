from .r6 import v
