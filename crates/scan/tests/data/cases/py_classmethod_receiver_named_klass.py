# expect: argv_flag_injection+
import os, subprocess, functools, abc, builtins
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Git:
    @classmethod
    def log(klass, ref):
        subprocess.run(['git', 'log', ref], timeout=5)
@mcp.tool()
def go(cmd: str):
    Git.log(cmd)
