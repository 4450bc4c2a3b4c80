# expect: eval_near_child_process exec_dynamic_string
import builtins
import os
c = "ls"
builtins.exec("c = input()")
os.system(c)
