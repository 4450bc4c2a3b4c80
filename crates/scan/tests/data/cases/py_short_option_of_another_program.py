# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(ref: str):
    return subprocess.run(["git", "log", "-t", ref], timeout=5)
