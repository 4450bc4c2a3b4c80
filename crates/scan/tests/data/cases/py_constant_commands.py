# expect: none
import os
import sys
CMD = "ls -la"
os.system(CMD)
c = "tasklist" if sys.platform == "win32" else "ps aux"
os.system(c)
