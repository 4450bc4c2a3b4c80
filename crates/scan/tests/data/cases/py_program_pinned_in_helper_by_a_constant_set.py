# expect: spawn_literal_dynamic_args+
import os
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
ALLOWED = {"ruff", "uv"}
def _validate(cmd: list) -> None:
    if not cmd or not isinstance(cmd, list):
        raise ValueError("bad command")
    base = os.path.basename(cmd[0]) if cmd else ""
    if base.endswith(".exe"):
        base = base[:-4]
    if base not in ALLOWED:
        raise ValueError(f"not allowed: {base}")
@mcp.tool()
def lint(language: str, path: str) -> str:
    cmd = load_config(language) + [path]
    _validate(cmd)
    return subprocess.run(cmd, capture_output=True, timeout=60).stdout
