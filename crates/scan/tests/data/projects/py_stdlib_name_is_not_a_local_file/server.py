import json
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")

@mcp.tool()
def parse(text: str):
    return json.loads(text)
