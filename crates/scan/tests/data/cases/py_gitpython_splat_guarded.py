# expect: none
import git
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(path: str, since: str | None = None, contains: str | None = None):
    repo = git.Repo(path)
    if since and since.startswith("-"):
        raise ValueError("since must not start with -")
    if contains and contains.startswith("-"):
        raise ValueError("contains must not start with -")
    args = []
    if since:
        args.extend(["--since", since])
    args.extend(["--format=%H"])
    match contains:
        case None:
            contains_sha = (None,)
        case _:
            contains_sha = ("--contains", contains)
    repo.git.branch(*contains_sha)
    return repo.git.log(*args)
