# expect: exec_dynamic_string
import os
import sys
c = "ls"
(c, d) = sys.argv[1], 2
os.system(c)
