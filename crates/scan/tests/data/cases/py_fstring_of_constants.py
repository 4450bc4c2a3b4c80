# expect: none
import os
BASE = "ls"
os.system(f"{BASE} -la")
