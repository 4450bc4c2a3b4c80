# expect: exec_dynamic_string+
import os, subprocess, sys, asyncio
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Git:
    def run(self, c):
        return os.popen(c)
class O:
    def __init__(self):
        self.git = Git()
    def go2(self, c):
        return 1, *self.git.run(c)
o = O()
@mcp.tool()
def go(cmd: str):
    return o.go2(cmd)
