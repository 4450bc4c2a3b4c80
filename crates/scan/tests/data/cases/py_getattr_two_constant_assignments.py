# expect: exec_dynamic_string
import os
import sys
NAME = "system"
if sys.platform == "win32":
    NAME = "popen"
getattr(os, NAME)(sys.argv[1])
