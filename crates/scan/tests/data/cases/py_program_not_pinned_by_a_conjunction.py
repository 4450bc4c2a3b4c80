# expect: spawn_dynamic_file_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
STRICT = False
def execute(command: list) -> str:
    # Refused only when both hold: any program passes when STRICT is off.
    if command[0] != "finch" and STRICT:
        raise ValueError("only finch")
    return subprocess.run(command, capture_output=True, timeout=60).stdout
@mcp.tool()
def finch(args: list) -> str:
    return execute(args)
