from mcp.server.fastmcp import FastMCP

from kw.runner import run

mcp = FastMCP("x")


@mcp.tool()
def show(path: str) -> str:
    return run("ls -l", target=path)
