# expect: eval_near_child_process exec_dynamic_string
import os
import sys
c = "ls"
eval("globals()")["c"] = sys.argv[1]
os.system(c)
