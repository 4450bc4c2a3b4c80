# expect: spawn_literal_dynamic_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def validate_ref(ref: str) -> None:
    if not ref or ref.strip().startswith("-"):
        raise ValueError("not a ref")
@mcp.tool()
def diff(ref: str) -> str:
    # The helper refuses a ref that starts with '-' before it reaches git.
    validate_ref(ref)
    return subprocess.run(["git", "diff", ref], capture_output=True, timeout=60).stdout
