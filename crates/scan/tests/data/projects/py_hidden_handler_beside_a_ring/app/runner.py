import os


def execute(c):
    return os.system(c)
