from mcp.server import Server

from vcs.backends import Git
from vcs.commands import dispatch

server = Server("vcs")


@server.call_tool()
async def call_tool(name: str, arguments: dict):
    if name == "blame":
        return Git(".").blame(arguments["path"])
    return dispatch(**arguments)
