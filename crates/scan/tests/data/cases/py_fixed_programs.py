# expect: none
import shutil
import subprocess
import sys
from pathlib import Path
subprocess.run([sys.executable, "-m", "pip", "--version"], timeout=5)
soffice = shutil.which("soffice") or "/usr/bin/soffice"
subprocess.run([soffice, "--version"], timeout=5)
subprocess.run([str(Path.home() / ".local" / "bin" / "claude"), "--version"], timeout=5)
for cmd in ["npx.cmd", "npx.exe", "npx"]:
    subprocess.run([cmd, "--version"], timeout=5)
