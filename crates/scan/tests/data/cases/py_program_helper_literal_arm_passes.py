# expect: spawn_dynamic_file_args+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
STRICT = os.environ.get("STRICT") == "1"
def check(cmd: list) -> None:
    # When not strict the tested name is "ruff", whatever cmd[0] is.
    base = cmd[0] if STRICT else "ruff"
    if base not in ("ruff", "uv"):
        raise ValueError("not allowed")
@mcp.tool()
def lint(args: list) -> str:
    check(args)
    return subprocess.run(args, capture_output=True, timeout=60).stdout
