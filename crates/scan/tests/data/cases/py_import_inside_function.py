# expect: exec_dynamic_string
import os
c = "ls"
def run():
    from settings import c
    os.system(c)
