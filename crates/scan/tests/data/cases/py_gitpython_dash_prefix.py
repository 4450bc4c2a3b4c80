# expect: argv_flag_injection+
import git
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(path: str, flag: str):
    repo = git.Repo(path)
    return repo.git.log(f"-{flag}")
