from mcp.server.fastmcp import FastMCP

from .ping import ping

mcp = FastMCP("x")


@mcp.tool()
def bounce(host: str) -> str:
    return ping(host, 3)
