# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Base:
    def __init__(self, command):
        self.command = command
    def run(self):
        return os.system(self.command)
class Runner(Base):
    pass
@mcp.tool()
def t(cmd: str):
    return Runner(cmd).run()
