# expect: exec_dynamic_string
import os
import sys
NAME = "getcwd"
for NAME in sys.argv[2:]:
    pass
getattr(os, NAME)(sys.argv[1])
