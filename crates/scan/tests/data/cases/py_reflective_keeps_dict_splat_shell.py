# expect: shell_true_option+ exec_dynamic_string+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
OPTS = {"shell": True}
@mcp.tool()
def run(cmd: str):
    print(locals())
    return subprocess.run(cmd, timeout=5, **OPTS)
