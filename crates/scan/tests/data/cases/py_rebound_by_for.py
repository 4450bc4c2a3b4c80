# expect: exec_dynamic_string
import os
import sys
c = "ls"
for c in sys.argv:
    os.system(c)
