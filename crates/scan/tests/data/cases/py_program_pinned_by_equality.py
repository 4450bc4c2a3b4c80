# expect: spawn_literal_dynamic_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def execute(command: list) -> str:
    if not command or command[0] != "finch":
        raise ValueError("only finch commands are allowed")
    return subprocess.run(command, capture_output=True, timeout=60).stdout
@mcp.tool()
def finch(args: list) -> str:
    return execute(args)
