# The validator is reached two ways: directly through a.py, and through sixteen re-exporting
# files r0 .. r15 to a.py, the last hop followed. Its dash-free return must count either way
# (the order the flows were taken in once decided whether val.py was reached at all).
import subprocess
from mcp.server.fastmcp import FastMCP
from .a import v as av
from .r0 import v as rv
mcp = FastMCP('x')

@mcp.tool()
def go(x: str):
    rv(x)
    p = av(x)
    subprocess.run(["git", "log", p], timeout=5)
