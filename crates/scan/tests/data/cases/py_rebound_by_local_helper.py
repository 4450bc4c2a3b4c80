# expect: spawn_literal_dynamic_args+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def checked(p):
    resolved = os.path.abspath(os.path.expanduser(p))
    if resolved == "/":
        raise ValueError("the root")
    return resolved
@mcp.tool()
def log(path: str):
    path = checked(path)
    return subprocess.run(["git", "log", path], timeout=5)
