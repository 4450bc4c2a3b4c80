# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(ref: str):
    cmd = ["git", "log", "HEAD"]
    cmd[2] = ref
    return subprocess.run(cmd, timeout=5)
