# expect: shell_true_option+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
SH = "/bin/sh"
@mcp.tool()
def run(script: str):
    return subprocess.run([SH, "-c", script], timeout=5)
