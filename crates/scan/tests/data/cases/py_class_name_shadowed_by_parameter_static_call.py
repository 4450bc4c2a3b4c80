# expect: spawn_literal_dynamic_args
import os, subprocess, functools, abc, builtins
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Git:
    @staticmethod
    def log(ref):
        subprocess.run(['git', 'log', ref], timeout=5)
@mcp.tool()
def go(cmd: str, Git=None):
    Git.log(cmd)
