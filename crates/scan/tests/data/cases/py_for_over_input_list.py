# expect: spawn_dynamic_file_args
import subprocess
import sys
for cmd in ["ls", sys.argv[1]]:
    subprocess.run([cmd, "-l"], timeout=5)
