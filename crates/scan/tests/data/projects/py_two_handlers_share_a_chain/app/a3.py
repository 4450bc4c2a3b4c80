from .sink import s3
from .a4 import a4


def a3(x, y):
    s3(x, y)
    a4(x, y)
