from mcp.server.fastmcp import FastMCP
from .git import Git
mcp = FastMCP("git")

class Server:
    def __init__(self):
        self.git = Git()

    def diff(self, rev):
        return self.git(rev)

server = Server()

@mcp.tool()
def diff(rev: str):
    return server.diff(rev)
