from .r15 import v
