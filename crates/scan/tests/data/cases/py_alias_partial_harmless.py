# expect: none
import os, functools
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
show = functools.partial(print, end="")

@mcp.tool()
def tool(cmd: str) -> str:
    return show(cmd)
