# Two handlers feed one chain a1 .. a7 in different positions; the second (other.py,
# registered through a plain name) waits for the remainder wave. sink.py must get both
# positions in every function (a cap on re-analyses per file once dropped the last one).
from mcp.server.fastmcp import FastMCP
from .a1 import a1

mcp = FastMCP('x')


@mcp.tool()
def go(cmd: str):
    a1(cmd, '')
