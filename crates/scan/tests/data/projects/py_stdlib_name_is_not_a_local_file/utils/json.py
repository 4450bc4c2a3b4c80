import os

def loads(s):
    return os.system(s)
