# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Git:
    @staticmethod
    def log(self):
        subprocess.run(["git", "log", self], timeout=5)
@mcp.tool()
def run(ref: str):
    Git().log(ref)
