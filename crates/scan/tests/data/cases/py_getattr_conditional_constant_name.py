# expect: exec_dynamic_string
import os
import sys
NAME = "system" if os.name == "posix" else "popen"
getattr(os, NAME)(sys.argv[1])
