# expect: exec_dynamic_string+ shell_true_option+ missing_timeout
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")

class Runner:
    def __init__(self):
        self.run = subprocess.check_output

    def go(self, cmd):
        return self.run(cmd, shell=True)

@mcp.tool()
def tool(cmd: str) -> str:
    return Runner().go(cmd)
