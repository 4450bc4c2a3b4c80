# expect: none
import shutil
import subprocess
def npx_command():
    if shutil.which("npx.cmd"):
        return "npx.cmd"
    return "npx"
def find_claude():
    claude = shutil.which("claude")
    if claude:
        return claude
    return None
subprocess.run([npx_command(), "--version"], timeout=5)
subprocess.run([find_claude(), "--version"], timeout=5)
