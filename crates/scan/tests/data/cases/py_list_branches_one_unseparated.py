# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(ref: str, everything: bool):
    if everything:
        cmd = ["git", "log", "--", ref]
    else:
        cmd = ["git", "log", ref]
    return subprocess.run(cmd, timeout=5)
