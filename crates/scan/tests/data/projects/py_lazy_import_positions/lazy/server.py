from mcp.server.fastmcp import FastMCP

mcp = FastMCP("x")


def archive(name: str, destination: str) -> str:
    from .ops import pack

    return pack("/srv/data", destination, name)


mcp.add_tool(archive)
