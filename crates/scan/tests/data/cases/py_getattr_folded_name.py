# expect: shell_true_option+ exec_dynamic_string+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(cmd: str):
    return getattr(subprocess, "ru" + "n")(cmd, shell=True, timeout=5)
