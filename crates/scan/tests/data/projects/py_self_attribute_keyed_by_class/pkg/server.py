from mcp.server.fastmcp import FastMCP
from .git import Git
from .mirror import Mirror
mcp = FastMCP("git")

class Local:
    def __init__(self):
        self.git = Git()

class Server:
    def __init__(self, git):
        self.git = git

    def diff(self, rev):
        return self.git.diff(rev)

server = Server(Mirror())

@mcp.tool()
def diff(rev: str):
    return server.diff(rev)
