# expect: spawn_dynamic_file_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(argvs: list[list[str]]):
    args = ["ls", "-l"]
    for args in argvs:
        subprocess.run(args, timeout=5)
