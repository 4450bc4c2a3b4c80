# expect: exec_dynamic_string
import importlib
import os
import sys
c = "ls"
importlib.import_module(__name__).c = sys.argv[1]
os.system(c)
