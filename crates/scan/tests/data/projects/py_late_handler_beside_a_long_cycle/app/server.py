from mcp.server.fastmcp import FastMCP
from .a import f
mcp = FastMCP('x')

@mcp.tool()
def go(cmd: str):
    return f(cmd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
