from mcp.server.fastmcp import FastMCP

from .git import Git

mcp = FastMCP("git")


@mcp.tool()
def diff(ref: str) -> str:
    return Git().diff(ref)


@mcp.tool()
def log(author: str) -> str:
    g = Git()
    return g.log(author)
