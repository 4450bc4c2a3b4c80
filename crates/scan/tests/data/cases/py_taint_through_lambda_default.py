# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(cmd: str):
    go = lambda c=cmd: os.system(c)
    return go()
