# expect: argv_flag_injection+
import git
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def diff(repo_path: str, target: str):
    repo = git.Repo(repo_path)
    return repo.git.diff(target)
