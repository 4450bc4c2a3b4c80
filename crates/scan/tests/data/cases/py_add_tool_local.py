# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def run(command: str):
    return os.system(command)
mcp.add_tool(run)
