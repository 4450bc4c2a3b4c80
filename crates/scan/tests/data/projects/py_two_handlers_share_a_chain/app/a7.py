from .sink import s7


def a7(x, y):
    s7(x, y)
