from .sink import s5
from .a6 import a6


def a5(x, y):
    s5(x, y)
    a6(x, y)
