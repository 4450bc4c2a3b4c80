# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def build(context: str):
    cmd = ["docker", "build", "-t", "app", context]
    return subprocess.run(cmd, timeout=600)
