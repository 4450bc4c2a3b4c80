# expect: exec_dynamic_string
import builtins
import os
import sys
c = "ls"
builtins.c = sys.argv[1]
del c
os.system(c)
