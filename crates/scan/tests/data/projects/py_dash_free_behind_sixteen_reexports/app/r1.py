from .r2 import v
