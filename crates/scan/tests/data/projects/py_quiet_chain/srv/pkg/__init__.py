from .impl import execute

__all__ = ["execute"]
