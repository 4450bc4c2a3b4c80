# expect: spawn_literal_dynamic_args
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Git:
    def __init__(self):
        self.ref = "HEAD"
    def log(self, count):
        subprocess.run(["git", "log", self.ref], timeout=5)
git = Git()
@mcp.tool()
def run(count: int):
    git.log(count)
