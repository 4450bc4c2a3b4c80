# expect: spawn_literal_dynamic_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(who: str):
    return subprocess.run(["git", "log", f"--author={who}"], timeout=5)
