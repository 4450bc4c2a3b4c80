# expect: spawn_literal_dynamic_args
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Git:
    def log(self, ref):
        subprocess.run(["git", "log", ref], timeout=5)
@mcp.tool()
def run(ref: str):
    Git.log(ref, "HEAD")
