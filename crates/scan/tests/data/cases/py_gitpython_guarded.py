# expect: none
import git
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def checkout(path: str, branch: str):
    if branch.startswith("-"):
        raise ValueError("no options")
    repo = git.Repo(path)
    return repo.git.checkout(branch)
