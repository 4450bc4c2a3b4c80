# expect: shell_true_option+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
if os.name == "nt":
    SH = "cmd.exe"
    FLAG = "/c"
else:
    SH = "/bin/sh"
    FLAG = "-c"
@mcp.tool()
def run(script: str):
    return subprocess.run([SH, FLAG, script], timeout=5)
