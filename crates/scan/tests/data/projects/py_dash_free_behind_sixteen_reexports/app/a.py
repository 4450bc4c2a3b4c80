from .val import v
