# expect: spawn_literal_dynamic_args+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def check(cmd: list) -> None:
    if not cmd or cmd[0] not in ("ruff", "uv"):
        raise ValueError("not an allowed program")
@mcp.tool()
def lint(args: list) -> str:
    # The helper raises unless the program is one of two constants.
    check(args)
    return subprocess.run(args, capture_output=True, timeout=60).stdout
