# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Base:
    def execute(self):
        return os.system(self.command)
class Git(Base):
    def set(self, command):
        self.command = "git " + command
@mcp.tool()
def run(cmd: str):
    g = Git()
    g.set(cmd)
    return g.execute()
