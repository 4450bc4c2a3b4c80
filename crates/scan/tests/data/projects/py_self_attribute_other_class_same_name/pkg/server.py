from mcp.server.fastmcp import FastMCP
from .git import Git
from .mirror import Mirror
mcp = FastMCP("git")

class Offline:
    def __init__(self):
        self.git = Mirror()

class Server:
    def __init__(self):
        self.git = Git()

    def diff(self, rev):
        return self.git.diff(rev)

server = Server()

@mcp.tool()
def diff(rev: str):
    return server.diff(rev)
