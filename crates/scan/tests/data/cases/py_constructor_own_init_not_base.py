# expect: exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Base:
    def __init__(self, command):
        os.system(command)
class Runner(Base):
    def __init__(self, label):
        self.label = label
@mcp.tool()
def t(label: str):
    return Runner(label)
