# expect: exec_dynamic_string
import os
import sys
c = "ls"
a = c = sys.argv[1]
os.system(c)
