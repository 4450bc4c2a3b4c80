# expect: exec_dynamic_string+ exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Shell:
    def run(self, command):
        return self._system(command)
    def _system(self, line):
        return os.system(line)
    def other(self, line):
        return os.system(line)
@mcp.tool()
def go(command: str):
    shell = Shell()
    return shell.run(command)
