# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def run(cmd: str):
    return os.system(cmd)
mcp.tool()(run)
