# expect: exec_dynamic_string exec_dynamic_string
import os
c = "ls"
def f(*c, **kw):
    return os.system(c[0])
def g(x, *, c):
    return os.system(c)
