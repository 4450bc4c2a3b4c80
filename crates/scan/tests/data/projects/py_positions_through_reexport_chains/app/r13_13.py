from .sink import run
