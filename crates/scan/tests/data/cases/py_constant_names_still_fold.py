# expect: none
import os
BASE = "ls"
FLAGS = " -la"
CMD = BASE + FLAGS
os.system(CMD)
for item in ["a", "b"]:
    os.system(BASE)
