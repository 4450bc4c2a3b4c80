# expect: none
import os
from typing import *
CMD = "ls -la"
os.system(CMD)
