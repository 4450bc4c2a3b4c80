# expect: argv_flag_injection+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(path: str, resolve: bool):
    if resolve:
        path = os.path.realpath(path)
    return subprocess.run(["git", "log", path], timeout=5)
