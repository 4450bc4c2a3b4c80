# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(path: str):
    cmd = "ls"
    cmd = path
    return os.system(cmd)
