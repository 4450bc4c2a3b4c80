# expect: argv_flag_injection+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def check(cmd: list) -> None:
    if cmd[0] not in ("git", "ruff"):
        raise ValueError("not allowed")
@mcp.tool()
def run(args: list) -> str:
    # git is let through, and the rest of the list is the caller's.
    check(args)
    return subprocess.run(args, capture_output=True, timeout=60).stdout
