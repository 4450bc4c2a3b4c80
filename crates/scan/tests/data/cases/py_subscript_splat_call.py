# expect: shell_true_option+ exec_dynamic_string+ missing_timeout
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def go(cmd: str):
    table = {}
    return table[0, *subprocess.run(cmd, shell=True).stdout]
