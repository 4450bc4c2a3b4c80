# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
RUNNERS = {"echo": print, "sh": os.system}

@mcp.tool()
def tool(kind: str, cmd: str) -> str:
    return RUNNERS[kind](cmd)
