from mcp.server.fastmcp import FastMCP

from gitmcp.shell import run_command as rc

mcp = FastMCP("shell")


@mcp.tool()
def run(command: str) -> str:
    return rc(command)
