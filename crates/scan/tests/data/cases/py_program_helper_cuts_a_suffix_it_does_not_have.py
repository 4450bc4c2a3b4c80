# expect: spawn_dynamic_file_args+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def check(cmd: list) -> None:
    base = os.path.basename(cmd[0])
    # The cut is in the branch where the suffix is absent: "ruffXsh!" passes as "ruff".
    if base.endswith(".exe"):
        pass
    else:
        base = base[:-4]
    if base not in ("ruff", "uv"):
        raise ValueError("not allowed")
@mcp.tool()
def lint(args: list) -> str:
    check(args)
    return subprocess.run(args, capture_output=True, timeout=60).stdout
