# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def validate(path: str, ref: str) -> None:
    if path.startswith("-"):
        raise ValueError("not a path")
@mcp.tool()
def diff(ref: str, path: str) -> str:
    # The helper checks its first parameter, and `ref` is its second.
    validate(path, ref)
    return subprocess.run(["git", "diff", ref], capture_output=True, timeout=60).stdout
