# expect: exec_dynamic_string+
import functools, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
sh = functools.partial(subprocess.run, shell=True)

@mcp.tool()
def tool(cmd: str) -> str:
    return sh(cmd)
