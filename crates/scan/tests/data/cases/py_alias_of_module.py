# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
o = os
@mcp.tool()
def go(cmd: str):
    o.system(cmd)
