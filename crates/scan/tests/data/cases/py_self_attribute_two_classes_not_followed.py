# expect: exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def run(self, command):
        return os.system(command)
class Echo:
    def run(self, command):
        return command
class Server:
    def __init__(self, loud):
        self.runner = Runner()
        if not loud:
            self.runner = Echo()
    def handle(self, command):
        return self.runner.run(command)
server = Server(False)
@mcp.tool()
def go(command: str):
    return server.handle(command)
