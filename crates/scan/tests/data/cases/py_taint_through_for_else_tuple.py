# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
c = "ls"
@mcp.tool()
def run(pairs: dict[str, str]):
    for k, (c, _) in pairs.items():
        os.system(c)
