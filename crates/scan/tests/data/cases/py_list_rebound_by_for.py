# expect: spawn_dynamic_file_args
import json
import subprocess
import sys
args = ["ls", "-l"]
for args in json.loads(sys.argv[1]):
    subprocess.run(args, timeout=5)
