# expect: exec_dynamic_string
import inspect
import os
import sys
c = "ls"
inspect.currentframe().f_globals.update(c=sys.argv[1])
os.system(c)
