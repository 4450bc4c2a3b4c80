# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
c = "ls"
@mcp.tool()
def run(cmds: list[str]):
    for c in cmds:
        os.system(c)
