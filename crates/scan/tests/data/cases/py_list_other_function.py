# expect: spawn_dynamic_file_args
import subprocess
import sys
def listing():
    args = ["ls", "-l"]
    return subprocess.run(args, timeout=5)
def other():
    args = sys.argv[1:]
    return subprocess.run(args, timeout=5)
