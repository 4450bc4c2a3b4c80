# expect: none
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Danger:
    def __init__(self):
        self.run = os.system
class Safe:
    def run(self, c):
        return len(c)
    def go(self, cmd):
        return self.run(cmd)
@mcp.tool()
def tool(cmd: str) -> str:
    return Safe().go(cmd)
