# expect: exec_dynamic_string
import os
import sys
c = "ls"
sys._getframe().f_globals["c"] = sys.argv[1]
os.system(c)
