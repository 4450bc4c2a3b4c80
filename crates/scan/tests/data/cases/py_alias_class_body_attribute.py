# expect: exec_dynamic_string+
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class R:
    run = os.system
    def go(self, cmd):
        return self.run(cmd)
@mcp.tool()
def tool(cmd: str) -> str:
    return R().go(cmd)
