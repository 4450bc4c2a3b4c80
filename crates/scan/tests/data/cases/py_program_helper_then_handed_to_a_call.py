# expect: spawn_dynamic_file_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def check(cmd: list) -> None:
    if cmd[0] not in ("ruff", "uv"):
        raise ValueError("not allowed")
def prefix(cmd: list, program: str) -> None:
    cmd[0:0] = [program]
@mcp.tool()
def lint(args: list, program: str) -> str:
    check(args)
    # A call may change the checked list before it runs.
    prefix(args, program)
    return subprocess.run(args, capture_output=True, timeout=60).stdout
