from .r5 import v
