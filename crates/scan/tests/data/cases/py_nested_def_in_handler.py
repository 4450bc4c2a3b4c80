# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def go(cmd: str):
    def run(c):
        return os.popen(c)
    return run(cmd)
