from mcp.server import Server

from . import git

server = Server("git")


@server.call_tool()
async def call_tool(name: str, arguments: dict):
    ref = arguments["ref"]
    return git.diff(ref)
