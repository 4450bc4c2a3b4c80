# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def helper(c):
    return os.system(c)
@mcp.tool()
def run(cmd: str):
    return helper(c=cmd)
