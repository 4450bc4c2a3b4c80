# expect: exec_dynamic_string+ exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def go(cmd: str):
    (p := os.popen)(cmd)
    if (q := os.system):
        q(cmd)
