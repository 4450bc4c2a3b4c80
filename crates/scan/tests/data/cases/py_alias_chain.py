# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
o = os
P = o.popen
@mcp.tool()
def go(cmd: str):
    Q = P
    return list(Q(cmd))
