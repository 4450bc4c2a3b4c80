# expect: exec_dynamic_string+
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class R:
    def __init__(self):
        self.a, self.b = os.system, print
    def go(self, cmd):
        return self.a(cmd)
@mcp.tool()
def tool(cmd: str) -> str:
    return R().go(cmd)
