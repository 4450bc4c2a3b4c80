# expect: none
import git
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def diff(path: str, lines: int):
    repo = git.Repo(path)
    return repo.git.diff(f"--unified={lines}")
