# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def go(cmd: str):
    show, run = print, os.system
    show(cmd)
    run(cmd)
