# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Shell:
    def run(self, command):
        return os.system(command)
class Base:
    def __init__(self):
        self.shell = Shell()
class Server(Base):
    def handle(self, command):
        return self.shell.run(command)
server = Server()
@mcp.tool()
def go(command: str):
    return server.handle(command)
