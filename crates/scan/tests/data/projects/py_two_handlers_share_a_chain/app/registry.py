from mcp.server.fastmcp import FastMCP

mcp = FastMCP('y')
tool = mcp.add_tool
