# expect: exec_dynamic_string
import os
c = "ls"
def c():
    return "rm -rf /"
os.system(c)
