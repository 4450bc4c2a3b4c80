from .sink import s6
from .a7 import a7


def a6(x, y):
    s6(x, y)
    a7(x, y)
