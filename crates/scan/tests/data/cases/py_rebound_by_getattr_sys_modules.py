# expect: exec_dynamic_string
import os
import sys
c = "ls"
getattr(sys, "modules")[__name__].c = sys.argv[1]
os.system(c)
