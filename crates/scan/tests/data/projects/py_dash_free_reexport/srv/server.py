import subprocess
from mcp.server.fastmcp import FastMCP
from srv.util import validate_path

mcp = FastMCP("x")


@mcp.tool()
def diff(repo: str):
    repo = validate_path(repo)
    return subprocess.run(["git", "-C", repo, "diff"], timeout=5)
