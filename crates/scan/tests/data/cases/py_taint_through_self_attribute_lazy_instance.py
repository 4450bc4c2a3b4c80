# expect: shell_true_option+ exec_dynamic_string+ missing_timeout
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Shell:
    def run(self, command):
        return subprocess.run(command, shell=True)
class Server:
    def __init__(self):
        self.shell = None
    def handle(self, command):
        if self.shell is None:
            self.shell = Shell()
        return self.shell.run(command)
server = Server()
@mcp.tool()
def go(command: str):
    return server.handle(command)
