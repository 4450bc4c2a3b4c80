# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")

class Box:
    pass

box = Box()
box.run = os.system

@mcp.tool()
def tool(cmd: str) -> str:
    return box.run(cmd)
