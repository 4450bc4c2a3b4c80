from mcp.server.fastmcp import FastMCP

from .a import fetch

mcp = FastMCP("x")


@mcp.tool()
def clone(url: str, depth: int = 1) -> str:
    return fetch(url, depth)
