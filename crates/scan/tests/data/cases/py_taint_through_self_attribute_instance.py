# expect: exec_dynamic_string+ exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def run(self, command):
        return os.system(command)
    def other(self, command):
        return os.system(command)
class Server:
    def __init__(self):
        self.runner = Runner()
    def handle(self, command):
        return self.runner.run(command)
server = Server()
@mcp.tool()
def go(command: str):
    return server.handle(command)
