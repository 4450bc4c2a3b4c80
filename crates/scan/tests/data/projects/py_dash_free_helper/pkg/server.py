import subprocess
from mcp.server.fastmcp import FastMCP
from pkg.paths import validate_path, passthrough
mcp = FastMCP("x")

@mcp.tool()
def build(context: str):
    context = validate_path(context)
    return subprocess.run(["docker", "build", "-t", "app", context], timeout=600)

@mcp.tool()
def build2(context: str):
    context = passthrough(context)
    return subprocess.run(["docker", "build", "-t", "app", context], timeout=600)

@mcp.tool()
def build3(context: str, again: str):
    context = validate_path(context)
    if again:
        context = again
    return subprocess.run(["docker", "build", "-t", "app", context], timeout=600)
