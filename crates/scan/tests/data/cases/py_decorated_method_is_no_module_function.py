# expect: exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
import functools
def run(cmd):
    return cmd.upper()
class Shell:
    @functools.lru_cache
    def run(self, cmd):
        return os.system(cmd)
@mcp.tool()
def go(cmd: str):
    return run(cmd)
