# expect: spawn_literal_dynamic_args+ spawn_literal_dynamic_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def build(image: str, tag: str):
    cmd = ["docker", "build", "--platform", "linux/amd64", "-t", f"{image}:{tag}", "."]
    subprocess.run(cmd, timeout=600)
    return subprocess.run(["podman", "build", "--tag", image, "-f", "Containerfile", "."], timeout=600)
