# expect: shell_true_option+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(script: str):
    return subprocess.run(["sh", "-ec", script], timeout=5)
