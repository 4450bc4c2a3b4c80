# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
C = "ls "
@mcp.tool()
def run(cmd: str):
    c = C
    c += cmd
    return os.system(c)
