from mcp.server.fastmcp import FastMCP
from .command import ShellProcess
mcp = FastMCP("x")
def register_kubectl_tool():
    async def kubectl(command: str) -> str:
        process = ShellProcess(command="kubectl")
        return process.run(command)
    mcp.tool()(kubectl)
