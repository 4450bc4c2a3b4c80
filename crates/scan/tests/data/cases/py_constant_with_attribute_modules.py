# expect: none
import os
CMD = "ls -la"
def count(model):
    return len(list(model.modules()))
os.system(CMD)
