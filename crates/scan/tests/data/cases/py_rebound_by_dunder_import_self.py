# expect: exec_dynamic_string
import os
import sys
c = "ls"
setattr(__import__(__name__), "c", sys.argv[1])
os.system(c)
