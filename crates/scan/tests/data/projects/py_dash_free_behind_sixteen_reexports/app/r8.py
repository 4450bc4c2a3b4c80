from .r9 import v
