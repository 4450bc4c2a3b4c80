# expect: argv_flag_injection+ argv_flag_injection+ argv_flag_injection+
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def log(path: str, request: dict):
    path = os.path.realpath(path)
    match request:
        case {"path": path}:
            pass
    return subprocess.run(["git", "log", path], timeout=5)
@mcp.tool()
def log2(path: str, override: str):
    def use_override():
        nonlocal path
        path = override
    path = os.path.realpath(path)
    if override:
        use_override()
    return subprocess.run(["git", "log", path], timeout=5)
@mcp.tool()
def log3(path: str, names: list):
    path = os.path.realpath(path)
    import shlex as path2
    for i, path in enumerate(names):
        pass
    return subprocess.run(["git", "log", path], timeout=5)
