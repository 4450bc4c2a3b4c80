# expect: spawn_literal_dynamic_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")

@mcp.tool()
def a(path: str):
    path = "./" + path
    subprocess.run(["git", "log", path], timeout=5)
