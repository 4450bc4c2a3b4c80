# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def run(self, /, command):
        os.system(command)
runner = Runner()
@mcp.tool()
def go(cmd: str):
    runner.run(cmd)
