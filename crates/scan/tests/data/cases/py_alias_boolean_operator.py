# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
p = None or os.system
@mcp.tool()
def go(cmd: str):
    p(cmd)
