# expect: spawn_dynamic_file_args+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def check(cmd: list) -> None:
    if cmd[0] not in ("ruff", "uv"):
        raise ValueError("not allowed")
@mcp.tool()
def lint(args: list, program: str) -> str:
    check(args)
    # The first element is replaced after the check.
    args.insert(0, program)
    return subprocess.run(args, capture_output=True, timeout=60).stdout
