# expect: none
import os
CMD = "ls -la"
def greet(name):
    return "hello {name}".format(**locals())
os.system(CMD)
