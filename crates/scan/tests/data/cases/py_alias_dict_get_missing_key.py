# expect: none
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
RUNNERS = {"sh": os.system}
@mcp.tool()
def tool(cmd: str) -> str:
    return RUNNERS.get("missing", print)(cmd)
