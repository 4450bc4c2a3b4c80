# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(ref: str):
    print(vars())
    args = ["git", "log"]
    args.append(ref)
    return subprocess.run(args, timeout=5)
