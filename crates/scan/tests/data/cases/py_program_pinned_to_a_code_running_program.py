# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def execute(command: list) -> str:
    # Pinned to git, but the rest of the list is the caller's: its options too.
    if command[0] not in ("git", "gh"):
        return "refused"
    return subprocess.run(command, capture_output=True, timeout=60).stdout
@mcp.tool()
def git(args: list) -> str:
    return execute(args)
