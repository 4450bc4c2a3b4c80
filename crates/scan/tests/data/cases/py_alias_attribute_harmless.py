# expect: none
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")

class Printer:
    def __init__(self):
        self.run = print

    def go(self, cmd):
        return self.run(cmd)

@mcp.tool()
def tool(cmd: str) -> str:
    return Printer().go(cmd)
