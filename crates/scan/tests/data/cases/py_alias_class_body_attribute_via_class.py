# expect: exec_dynamic_string+
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class R:
    run = os.system
@mcp.tool()
def tool(cmd: str) -> str:
    return R.run(cmd)
