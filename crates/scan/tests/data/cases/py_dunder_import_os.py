# expect: exec_dynamic_string+
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(cmd: str):
    return __import__("os").system(cmd)
