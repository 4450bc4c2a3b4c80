# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Box:
    pass
@mcp.tool()
def run(cmd: str):
    box = Box()
    box.c = cmd
    return os.system(box.c)
