# expect: exec_dynamic_string+
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
RUNNERS = {"sh": os.system}
@mcp.tool()
def tool(cmd: str) -> str:
    return RUNNERS.get("sh")(cmd)
