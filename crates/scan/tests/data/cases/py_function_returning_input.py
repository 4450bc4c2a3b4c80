# expect: spawn_dynamic_file_args spawn_dynamic_file_args
import subprocess
import sys
def program():
    if len(sys.argv) > 1:
        return sys.argv[1]
    return "ls"
def recursive(n):
    return recursive(n - 1) if n else "ls"
subprocess.run([program(), "-l"], timeout=5)
subprocess.run([recursive(3), "-l"], timeout=5)
