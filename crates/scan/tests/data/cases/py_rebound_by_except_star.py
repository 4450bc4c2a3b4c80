# expect: exec_dynamic_string
import os
c = "ls"
try:
    pass
except* ValueError as c:
    pass
os.system(c)
