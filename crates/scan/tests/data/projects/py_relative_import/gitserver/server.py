from mcp.server.fastmcp import FastMCP

from .git import run_git

mcp = FastMCP("git")


@mcp.tool()
def log(ref: str) -> str:
    return run_git(ref)
