# expect: none
import os
CMD = "ls -la"
def run(path, exec=False):
    return path
os.system(CMD)
