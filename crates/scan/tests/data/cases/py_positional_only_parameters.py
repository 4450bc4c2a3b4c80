# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def run(label, /, command):
    os.system(command)
@mcp.tool()
def go(cmd: str):
    run("job", cmd)
