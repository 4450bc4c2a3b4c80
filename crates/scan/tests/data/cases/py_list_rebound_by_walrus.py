# expect: spawn_dynamic_file_args
import subprocess
import sys
args = ["ls", "-l"]
if (args := sys.argv[1:]):
    subprocess.run(args, timeout=5)
