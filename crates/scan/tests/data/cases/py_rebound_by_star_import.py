# expect: exec_dynamic_string
import os
c = "ls"
from settings import *
os.system(c)
