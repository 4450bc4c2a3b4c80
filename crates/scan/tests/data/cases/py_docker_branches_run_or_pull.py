# expect: argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def container(action: str, image: str, command: str = "true"):
    if action == "run":
        cmd = ["docker", "run", "--rm", image, command]
    else:
        cmd = ["docker", "pull", image]
    subprocess.run(cmd, timeout=600)
