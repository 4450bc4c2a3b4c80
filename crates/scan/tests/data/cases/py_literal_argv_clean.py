# expect: none
import subprocess
subprocess.run(["ls", "-la"], timeout=5)
