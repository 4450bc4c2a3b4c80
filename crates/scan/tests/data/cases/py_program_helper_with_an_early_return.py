# expect: spawn_dynamic_file_args+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
PERMISSIVE = os.environ.get("MODE") == "permissive"
def check(cmd: list) -> None:
    if PERMISSIVE:
        return
    if cmd[0] not in ("ruff", "uv"):
        raise ValueError("not allowed")
@mcp.tool()
def lint(args: list) -> str:
    # In permissive mode the helper returns before its check.
    check(args)
    return subprocess.run(args, capture_output=True, timeout=60).stdout
