# expect: argv_flag_injection+ argv_flag_injection+
import git
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(path: str, since: str, rev: str):
    repo = git.Repo(path)
    args = []
    args.extend(["--oneline", since])
    repo.git.log(*args)
    refs = ("--contains", rev) if rev else (None,)
    return repo.git.branch(*refs)
