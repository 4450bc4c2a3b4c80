# expect: exec_dynamic_string+ exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def run(cmd: str):
    os.system(cmd)
def register_tools():
    async def shell(command: str) -> str:
        return os.popen(command).read()
    mcp.tool()(shell)
def register_other():
    # `run` here is the module's function, which no registration names: not a handler.
    def helper(cmd: str):
        return cmd
    return helper
