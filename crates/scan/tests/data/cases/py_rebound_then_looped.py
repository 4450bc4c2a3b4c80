# expect: argv_flag_injection+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(path: str, other: str):
    path = os.path.realpath(path)
    for path in [path, other]:
        subprocess.run(["git", "log", path], timeout=5)
