# expect: spawn_literal_dynamic_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def ls(path: str):
    return subprocess.run(["ls", path], timeout=5)
