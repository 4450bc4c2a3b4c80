# expect: argv_flag_injection+ argv_flag_injection+ argv_flag_injection+ argv_flag_injection+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
def ref_of(name):
    return "%s" % name
@mcp.tool()
def log_direct(rev: str):
    return subprocess.run(["git", "log", "%s" % rev], timeout=5)
@mcp.tool()
def log_name(rev: str):
    rev = "%s" % rev
    return subprocess.run(["git", "log", rev], timeout=5)
@mcp.tool()
def log_helper(rev: str):
    return subprocess.run(["git", "log", ref_of(rev)], timeout=5)
@mcp.tool()
def log_tuple(rev: str, path: str):
    spec = "%s:%s" % (rev, path)
    return subprocess.run(["git", "show", spec], timeout=5)
