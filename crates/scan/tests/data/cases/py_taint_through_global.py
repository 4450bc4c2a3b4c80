# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
c = "ls"
@mcp.tool()
def set_cmd(cmd: str):
    global c
    c = cmd
def later():
    return os.system(c)
