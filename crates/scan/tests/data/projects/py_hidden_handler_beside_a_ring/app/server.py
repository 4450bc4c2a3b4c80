# A 16-file cycle (r0 .. r15) that gains one tainted position a wave, and a handler in
# other_server.py registered through a plain name, which waits for the remainder wave: its
# one-hop flow into runner.py must still be followed (it was lost once the waves ran out).
from mcp.server.fastmcp import FastMCP
from .r0 import f0
mcp = FastMCP('x')

@mcp.tool()
def go(cmd: str):
    return f0(cmd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
