# expect: none
import os
from typing import Final
CMD: Final = "ls -la"
A = B = "uptime"
os.system(CMD)
os.system(A)
os.system(B)
