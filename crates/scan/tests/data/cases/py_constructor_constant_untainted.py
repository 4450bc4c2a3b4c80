# expect: exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def __init__(self, command, label):
        self.command = command
        self.label = label
    def run(self):
        return os.system(self.command)
@mcp.tool()
def go(label: str):
    return Runner("uptime", label).run()
