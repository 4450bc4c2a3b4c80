# expect: shell_true_option+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(script: str, exec: bool = False):
    args = ["sh", "-c", script]
    return subprocess.run(args, timeout=5)
