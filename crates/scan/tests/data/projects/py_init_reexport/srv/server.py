from mcp.server.fastmcp import FastMCP

from .lib import execute

mcp = FastMCP("x")


@mcp.tool()
def shell(script: str) -> str:
    return execute(script)
