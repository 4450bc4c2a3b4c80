# expect: exec_dynamic_string+ shell_true_option+ exec_dynamic_string+ missing_timeout
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
S = os.system
R = subprocess.run
@mcp.tool()
def go(cmd: str):
    S(cmd)
    R(cmd, shell=True)
