# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def run(command):
    return os.popen(command)
@mcp.tool()
def go(cmd: str):
    r = 1, *run(cmd)
    return r
