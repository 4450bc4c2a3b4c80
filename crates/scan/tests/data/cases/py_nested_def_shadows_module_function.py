# expect: exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def shell(command: str) -> str:
    # module-level helper with the same name, never registered
    return os.popen(command).read()
def register_tools(enable_shell: bool):
    if enable_shell:
        def shell(command: str) -> str:
            return "disabled"
        mcp.tool()(shell)
