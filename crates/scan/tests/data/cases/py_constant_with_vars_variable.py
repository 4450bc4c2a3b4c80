# expect: none
import os
CMD = "ls -la"
vars = {"HOME": "/tmp"}
os.system(CMD)
