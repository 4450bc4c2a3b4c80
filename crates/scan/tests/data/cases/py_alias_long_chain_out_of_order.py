# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def e(): return f
f = d
d = c
c = b
b = a
a = os
@mcp.tool()
def go(cmd: str):
    f.system(cmd)
