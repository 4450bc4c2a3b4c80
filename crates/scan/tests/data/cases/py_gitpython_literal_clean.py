# expect: none
from git import Repo
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def status(target: str):
    repo = Repo(".")
    return repo.git.status("--short")
