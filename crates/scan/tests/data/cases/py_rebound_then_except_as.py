# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")

@mcp.tool()
def a(path: str):
    path = "./" + path
    try:
        pass
    except Exception as path:
        pass
    subprocess.run(["git", "log", path], timeout=5)
