# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
RUNNERS = {"sh": os.system, "echo": print}

@mcp.tool()
def tool(cmd: str) -> str:
    return RUNNERS["sh"](cmd)
