# expect: spawn_dynamic_file_args
import shlex
import subprocess
import sys
def run():
    args = ["ls", "-l"]
    args = shlex.split(sys.argv[1])
    subprocess.run(args, timeout=5)
