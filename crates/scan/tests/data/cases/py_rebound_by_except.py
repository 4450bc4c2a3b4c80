# expect: exec_dynamic_string
import os
c = "ls"
try:
    raise ValueError("x")
except ValueError as c:
    os.system(c)
