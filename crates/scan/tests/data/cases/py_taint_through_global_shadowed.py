# expect: exec_dynamic_string+ exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
c = "ls"
@mcp.tool()
def set_cmd(cmd: str):
    global c
    c = cmd
def later():
    return os.system("echo " + c)
def local_one(c):
    # This `c` is the parameter, not the module's.
    return os.system(c)
