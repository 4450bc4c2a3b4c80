# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")

class Shell:
    def go(self, cmd):
        run = self.runner
        return run(cmd)

    def __init__(self):
        self.runner = os.system

@mcp.tool()
def tool(cmd: str) -> str:
    return Shell().go(cmd)
