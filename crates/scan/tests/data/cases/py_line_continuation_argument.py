# expect: exec_dynamic_string+ shell_true_option+ missing_timeout
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(command: str):
    # A line continuation before the first argument is not an argument.
    return subprocess.call(\
        command, shell=True)
