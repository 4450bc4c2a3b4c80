# expect: exec_dynamic_string+
import os, subprocess, functools, abc, builtins
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Git:
    def log(this, c):
        os.system(c)
g = Git()
@mcp.tool()
def go(cmd: str):
    g.log(cmd)
