# expect: eval_near_child_process+
import builtins
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def calc(expr: str):
    return builtins.eval(expr)
