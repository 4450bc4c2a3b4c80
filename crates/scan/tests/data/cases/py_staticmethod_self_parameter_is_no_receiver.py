# expect: exec_dynamic_string
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Git:
    def run(self, c):
        os.system(c)
    @staticmethod
    def both(self, c):
        return self.run(c)
class Safe:
    def run(self, c):
        return c
g = Git()
@mcp.tool()
def go(cmd: str):
    Git.both(Safe(), cmd)
