# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
c = "ls"
@mcp.tool()
def run(request: dict):
    match request:
        case {"cmd": str() as c}:
            os.system(c)
