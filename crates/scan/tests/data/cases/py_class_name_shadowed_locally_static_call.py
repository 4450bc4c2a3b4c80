# expect: spawn_literal_dynamic_args
import os, subprocess, functools, abc, builtins
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Git:
    @staticmethod
    def log(ref):
        subprocess.run(['git', 'log', ref], timeout=5)
class Safe:
    @staticmethod
    def log(ref):
        return ref
@mcp.tool()
def go(cmd: str):
    Git = Safe
    Git.log(cmd)
