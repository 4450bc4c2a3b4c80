# expect: exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def go(self, command):
        os.system(command)
@mcp.tool()
def go(cmd: str, Runner=dict):
    return Runner().go(cmd)
