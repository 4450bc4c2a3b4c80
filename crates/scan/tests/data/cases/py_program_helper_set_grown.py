# expect: spawn_dynamic_file_args+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
ALLOWED = {"ruff", "uv"}
def check(cmd: list) -> None:
    if cmd[0] not in ALLOWED:
        raise ValueError("not allowed")
@mcp.tool()
def allow(program: str) -> str:
    # The allow-list grows from tool input.
    ALLOWED.add(program)
    return "ok"
@mcp.tool()
def lint(args: list) -> str:
    check(args)
    return subprocess.run(args, capture_output=True, timeout=60).stdout
