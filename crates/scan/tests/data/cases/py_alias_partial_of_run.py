# expect: spawn_dynamic_file_args+ missing_timeout
import subprocess
from functools import partial
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
run = partial(subprocess.run, capture_output=True)

@mcp.tool()
def tool(cmd: str) -> str:
    return run(cmd)
