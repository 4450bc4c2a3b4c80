# expect: exec_dynamic_string+
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Base:
    def __init__(self):
        self.run = os.system
class Child(Base):
    def go(self, cmd):
        return self.run(cmd)
@mcp.tool()
def tool(cmd: str) -> str:
    return Child().go(cmd)
