# expect: exec_dynamic_string
import os
import sys
from sys import modules
c = "ls"
modules[__name__].c = sys.argv[1]
os.system(c)
