# expect: exec_dynamic_string
import os
import sys
c = "ls"
match sys.argv:
    case [_, c]:
        os.system(c)
