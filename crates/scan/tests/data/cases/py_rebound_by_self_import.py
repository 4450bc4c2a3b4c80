# expect: exec_dynamic_string
import os
import sys
import py_rebound_by_self_import as me
c = "ls"
me.c = sys.argv[1]
os.system(c)
