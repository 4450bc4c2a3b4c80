from .sink import s2
from .a3 import a3


def a2(x, y):
    s2(x, y)
    a3(x, y)
