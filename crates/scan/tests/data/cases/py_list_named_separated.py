# expect: spawn_literal_dynamic_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(ref: str):
    cmd = ["git", "log", "--", ref]
    return subprocess.run(cmd, timeout=5)
