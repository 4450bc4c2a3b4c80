# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def run(self, command):
        return os.popen(command)
    def both(self, command):
        return 1, *self.run(command)
runner = Runner()
@mcp.tool()
def go(cmd: str):
    return runner.both(cmd)
