# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(self: str):
    subprocess.run(["git", "log", self], timeout=5)
