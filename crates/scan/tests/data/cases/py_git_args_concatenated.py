# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def show(ref: str):
    args = ["git", "show"] + [ref]
    return subprocess.run(args, timeout=5)
