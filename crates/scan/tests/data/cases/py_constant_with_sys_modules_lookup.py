# expect: none
import os
import sys
CMD = "ls -la"
HAS_NUMPY = "numpy" in sys.modules
os.system(CMD)
