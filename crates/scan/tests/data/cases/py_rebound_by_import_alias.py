# expect: exec_dynamic_string
import os
c = "ls"
from settings import user_command as c
os.system(c)
