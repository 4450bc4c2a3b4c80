# expect: argv_flag_injection+
import git
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def checkout(path: str, branch: str):
    repo = git.Repo(path)
    out = repo.git.checkout(branch)
    if branch.startswith("-"):
        raise ValueError("too late")
    return out
