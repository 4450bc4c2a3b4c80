# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Git:
    @staticmethod
    def log(ref):
        subprocess.run(["git", "log", ref], timeout=5)
@mcp.tool()
def run(ref: str):
    Git.log(ref)
