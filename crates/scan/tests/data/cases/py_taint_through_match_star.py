# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
c = "ls"
@mcp.tool()
def run(argv: list[str]):
    match argv:
        case [*c]:
            return os.system(" ".join(c))
