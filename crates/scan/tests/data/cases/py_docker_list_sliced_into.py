# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def push(image: str, opt: str):
    cmd = ["docker", "push", image]
    cmd[1:1] = [opt]
    subprocess.run(cmd, timeout=600)
