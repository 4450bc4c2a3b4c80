import os
def run(c):
    return os.popen(c)
def run2(c):
    return os.popen(c)
