# expect: exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def __init__(self, command):
        os.system(command)
@mcp.tool()
def go(cmd: str):
    Runner = print
    return Runner(cmd)
