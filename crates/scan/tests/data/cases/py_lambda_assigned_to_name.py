# expect: exec_dynamic_string+ exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
run = lambda c: os.system(c)
@mcp.tool()
def go(cmd: str):
    run(cmd)
    show = lambda value, extra="": os.popen(value + extra)
    return show(cmd)
