# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(cmds: list[str]):
    return [os.system(c) for x in cmds if (c := x.strip())]
