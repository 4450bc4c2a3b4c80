# expect: exec_dynamic_string
import builtins
import os
import sys
c = "ls"
builtins.globals()["c"] = sys.argv[1]
os.system(c)
