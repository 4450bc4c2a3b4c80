# expect: shell_true_option+ exec_dynamic_string+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(cmd: str):
    opts = {"shell": True, "timeout": 5}
    return subprocess.run(cmd, **opts)
def version():
    opts = {"timeout": 5}
    return subprocess.run(["git", "--version"], **opts)
