# expect: exec_dynamic_string+
import os, subprocess, sys, asyncio
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def go(cmd: str):
    p = os.popen
    r = 1, *p(cmd)
    return r
