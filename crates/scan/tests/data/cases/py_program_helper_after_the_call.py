# expect: spawn_dynamic_file_args+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def check(cmd: list) -> None:
    if cmd[0] not in ("ruff", "uv"):
        raise ValueError("not allowed")
@mcp.tool()
def lint(args: list) -> str:
    out = subprocess.run(args, capture_output=True, timeout=60).stdout
    check(args)
    return out
