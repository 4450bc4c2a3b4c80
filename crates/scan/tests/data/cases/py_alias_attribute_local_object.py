# expect: none
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class B: pass
box = B()
box.run = os.system
@mcp.tool()
def tool(cmd: str) -> str:
    box = B()
    box.run = print
    return box.run(cmd)
