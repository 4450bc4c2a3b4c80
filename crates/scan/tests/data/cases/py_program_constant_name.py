# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
GIT = "git"
@mcp.tool()
def diff(rev: str):
    return subprocess.run([GIT, "diff", rev], timeout=5)
