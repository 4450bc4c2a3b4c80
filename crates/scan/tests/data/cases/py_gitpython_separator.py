# expect: none
import git
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def add(path: str, files: list[str]):
    repo = git.Repo(path)
    return repo.git.add("--", *files)
