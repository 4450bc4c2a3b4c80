# expect: spawn_literal_dynamic_args+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(path: str):
    path = os.path.realpath(path)
    return subprocess.run(["git", "log", path], timeout=5)
