from mcp.server.fastmcp import FastMCP
import helpers
mcp = FastMCP("x")
@mcp.tool()
def go(cmd: str):
    print('x', *helpers.run(cmd))
@mcp.tool()
def go2(cmd: str):
    return 1, *helpers.run2(cmd)
