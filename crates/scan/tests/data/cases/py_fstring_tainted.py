# expect: exec_template_literal_with_input+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def ls(path: str):
    return os.system(f"ls {path}")
