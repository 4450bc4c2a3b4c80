from mcp.server.fastmcp import FastMCP
from .h1 import f1
mcp = FastMCP('x')

@mcp.tool()
def go(cmd: str):
    return f1(cmd)
