# expect: none
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")

class Danger:
    run = os.system

class Safe:
    run = print

    def go(self, cmd):
        return self.run(cmd)

@mcp.tool()
def tool(cmd: str) -> str:
    return Safe().go(cmd) or Safe.run(cmd)
