# expect: exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.resource("files://{path}")
def read(path: str):
    return os.popen("cat " + path).read()
