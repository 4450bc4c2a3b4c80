# expect: spawn_dynamic_file_args+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def check(cmd: list) -> None:
    if cmd[0] not in ("ruff", "uv"):
        print("unexpected program", cmd[0])
@mcp.tool()
def lint(args: list) -> str:
    # The helper notices, but lets the call go on.
    check(args)
    return subprocess.run(args, capture_output=True, timeout=60).stdout
