# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def shout(text):
    return text.upper()
@mcp.tool()
def go(cmd: str):
    p = os.popen
    p = shout
    return p(cmd)
