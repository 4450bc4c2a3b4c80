# expect: exec_dynamic_string
import builtins
import os
import sys
c = "ls"
getattr(builtins, "glob" + "als")()["c"] = sys.argv[1]
os.system(c)
