import os
def run(c):
    return os.popen(c)
