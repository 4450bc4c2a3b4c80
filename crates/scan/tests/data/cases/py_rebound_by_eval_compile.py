# expect: eval_near_child_process function_constructor_near_child_process exec_dynamic_string
import os
c = "ls"
eval(compile("c = input()", "<s>", "exec"))
os.system(c)
