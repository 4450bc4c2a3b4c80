# expect: exec_dynamic_string+ missing_timeout shell_true_option+
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def go(cmd: str):
    print(sep="\n", *subprocess.check_output(cmd, shell=True))
