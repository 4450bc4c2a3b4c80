# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def go(self, c):
        return os.system(c)
@mcp.tool()
def run(cmd: str):
    return Runner().go(cmd)
