# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def __init__(self, timeout, command):
        self.timeout = timeout
        self.command = command
    def run(self):
        return os.system(self.command)
@mcp.tool()
def go(command: str):
    return Runner(5, command=command).run()
