# expect: exec_dynamic_string+ exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def set(self, cmd):
        self.cmd = cmd
        self.fixed = "ls"
    def go(self):
        return os.system(self.cmd)
    def other(self):
        return os.system(self.fixed + self.name)
@mcp.tool()
def run(cmd: str):
    r = Runner()
    r.set(cmd)
    return r.go()
