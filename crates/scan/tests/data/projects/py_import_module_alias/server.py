from mcp.server.fastmcp import FastMCP

import tools.shell as sh

mcp = FastMCP("x")


@mcp.tool()
def grep(pattern: str, path: str) -> str:
    return sh.search(pattern, path)
