# expect: none
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def setup():
    run = subprocess.run
    return run
@mcp.tool()
def go(cmd: str):
    run = print
    run(cmd)
