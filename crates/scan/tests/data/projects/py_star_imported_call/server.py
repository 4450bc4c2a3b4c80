from mcp.server.fastmcp import FastMCP
from helpers import run
mcp = FastMCP("x")
@mcp.tool()
def go(cmd: str):
    return 1, *run(cmd)
