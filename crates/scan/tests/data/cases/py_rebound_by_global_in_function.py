# expect: exec_dynamic_string
import os
import sys
c = "ls"
def configure():
    global c
    c = sys.argv[1]
configure()
os.system(c)
