# expect: exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
run = lambda c: os.system(c)
@mcp.tool()
def go(cmd: str):
    run(os.environ["UPTIME"])
    return cmd
