# expect: exec_dynamic_string+ exec_dynamic_string+
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def register_tools(enable_shell: bool):
    if enable_shell:
        async def shell(command: str) -> str:
            return os.popen(command).read()
        mcp.tool()(shell)
def register_try():
    try:
        def run2(command: str) -> str:
            return os.popen(command).read()
    finally:
        pass
    mcp.tool()(run2)
