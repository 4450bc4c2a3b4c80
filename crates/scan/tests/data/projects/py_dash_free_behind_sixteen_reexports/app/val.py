import os

def v(p):
    return os.path.realpath(p)
