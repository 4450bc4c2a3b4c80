from mcp.server.fastmcp import FastMCP

from .helpers import prepare

mcp = FastMCP("x")


@mcp.tool()
def run(command: str) -> str:
    return prepare(command)
