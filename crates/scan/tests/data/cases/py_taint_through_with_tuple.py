# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
c = "ls"
@mcp.tool()
def run(cmd: str):
    with open(cmd) as f, f as c:
        return os.system(c.read())
