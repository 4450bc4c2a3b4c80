# expect: argv_flag_injection+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def checked(p):
    if p.startswith("./"):
        return p[2:]
    return os.path.realpath(p)
@mcp.tool()
def log(path: str):
    path = checked(path)
    return subprocess.run(["git", "log", path], timeout=5)
