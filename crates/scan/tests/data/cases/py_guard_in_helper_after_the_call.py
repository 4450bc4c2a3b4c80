# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def validate_ref(ref: str) -> None:
    if ref.startswith("-"):
        raise ValueError("not a ref")
@mcp.tool()
def diff(ref: str) -> str:
    # Checked only after git has run: too late.
    out = subprocess.run(["git", "diff", ref], capture_output=True, timeout=60).stdout
    validate_ref(ref)
    return out
