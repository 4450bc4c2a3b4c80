from .sink import s4
from .a5 import a5


def a4(x, y):
    s4(x, y)
    a5(x, y)
