from .a import v
