from mcp.server.fastmcp import FastMCP

from srv.helpers import evaluate

mcp = FastMCP("calc")


@mcp.tool()
def calc(expression: str) -> str:
    return str(evaluate(expression))
