# expect: exec_dynamic_string
import os
c = "ls"
c: str = input()
os.system(c)
