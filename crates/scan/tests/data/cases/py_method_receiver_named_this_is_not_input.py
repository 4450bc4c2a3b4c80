# expect: exec_dynamic_string
import os, subprocess, functools, abc, builtins
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Git:
    def __init__(this):
        this.base = 'ls'
    def log(this, count):
        os.system(this.base)
g = Git()
@mcp.tool()
def go(cmd: str):
    g.log(cmd)
