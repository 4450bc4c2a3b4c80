from .sink import s1
from .a2 import a2


def a1(x, y):
    s1(x, y)
    a2(x, y)
