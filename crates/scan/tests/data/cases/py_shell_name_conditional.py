# expect: shell_true_option+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
SH = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
@mcp.tool()
def run(script: str):
    return subprocess.run([SH, "-c", script], timeout=5)
