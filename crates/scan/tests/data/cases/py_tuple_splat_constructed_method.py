# expect: exec_dynamic_string+
import os, subprocess, sys, asyncio
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Runner:
    def run(self, c):
        return os.popen(c)
@mcp.tool()
def go(cmd: str):
    return 1, *Runner().run(cmd)
