# expect: exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def __init__(self: "Runner", command, label):
        self.label = label
        os.system(command)
@mcp.tool()
def go(label: str):
    return Runner("uptime", label)
