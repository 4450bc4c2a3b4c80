# expect: exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def run(c):
    os.system(c)
@mcp.tool()
def go(cmd: str):
    def run(c):
        return c.upper()
    return run(cmd)
def elsewhere():
    run(os.environ["CMD"])
