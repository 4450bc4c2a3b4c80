# expect: exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def run(label, /, command, extra):
    os.system(command)
@mcp.tool()
def go(cmd: str):
    run("job", PROGRAM, cmd)
PROGRAM = os.environ["PROGRAM"]
