# expect: shell_true_option+ exec_dynamic_string+
import importlib
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def run(cmd: str):
    return importlib.import_module("sub" + "process").run(cmd, shell=True, timeout=5)
