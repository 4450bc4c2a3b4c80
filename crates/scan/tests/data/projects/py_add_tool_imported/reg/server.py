from mcp.server.fastmcp import FastMCP

from reg import tools
from reg.tools import run_command

mcp = FastMCP("x")
mcp.add_tool(run_command)
mcp.tool()(tools.evaluate)
