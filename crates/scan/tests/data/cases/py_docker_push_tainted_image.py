# expect: spawn_literal_dynamic_args+ spawn_literal_dynamic_args+ argv_flag_injection+ argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def push(image: str):
    # docker reads its own options (--config, -H) only before the subcommand, and push has
    # no option that runs code: argument injection.
    subprocess.run(["docker", "push", image], timeout=600)
    cmd = ["docker", "logs", "--tail", "10", image]
    subprocess.run(cmd, timeout=60)
    # Before the subcommand, or with one that runs code, it is flag injection.
    subprocess.run(["docker", image, "push"], timeout=600)
    subprocess.run(["podman", "push", image], timeout=600)
