# expect: exec_dynamic_string
import os
c = "ls"
with open("/tmp/cmd") as c:
    os.system(c)
