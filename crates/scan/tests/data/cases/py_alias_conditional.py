# expect: exec_dynamic_string+
import os, sys
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
run = print if sys.platform == "win32" else os.system
@mcp.tool()
def go(cmd: str):
    run(cmd)
