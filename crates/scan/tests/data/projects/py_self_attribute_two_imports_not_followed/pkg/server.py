from mcp.server.fastmcp import FastMCP

from .git import Git
from .mirror import Mirror

mcp = FastMCP("git")


class Server:
    def __init__(self, offline):
        self.git = Git()
        if offline:
            self.git = Mirror()

    def diff(self, rev):
        return self.git.diff(rev)


server = Server(False)


@mcp.tool()
def diff(rev: str):
    return server.diff(rev)
