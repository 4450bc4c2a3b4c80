# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
c = "ls"
@mcp.tool()
def run(cmd: str):
    a = c = cmd
    return os.system(c)
