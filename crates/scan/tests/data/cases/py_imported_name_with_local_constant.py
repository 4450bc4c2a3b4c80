# expect: exec_dynamic_string
import os
from settings import c
def other():
    c = "ls"
    return c
def run():
    os.system(c)
