# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def get(name: str):
    return subprocess.run(["kubectl", "get", "pod", name], timeout=5)
