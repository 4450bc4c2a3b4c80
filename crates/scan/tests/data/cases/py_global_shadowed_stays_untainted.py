# expect: exec_dynamic_string exec_dynamic_string exec_dynamic_string exec_dynamic_string exec_dynamic_string exec_dynamic_string exec_dynamic_string exec_dynamic_string
import os
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
c = "ls"
@mcp.tool()
def set_cmd(cmd: str):
    global c
    c = cmd
def by_for():
    for c in ["ls", "pwd"]:
        os.system(c)
def by_import():
    from shlex import quote as c
    os.system(c("x"))
def by_with():
    with open("/etc/cmd") as c:
        os.system(c.read())
def by_walrus():
    if (c := "uptime"):
        os.system(c)
class K:
    c = "date"
    os.system(c)
def outer():
    c = "whoami"
    def inner():
        nonlocal c
        os.system(c)
    return inner
def by_except():
    try:
        pass
    except Exception as c:
        os.system(str(c))
def by_lambda():
    f = lambda c="id": os.system(c)
    return f
def by_del():
    c = "id"
    os.system(c)
    del c
def by_match(v):
    match v:
        case str(c):
            os.system(c)
def by_parameter(c):
    # The parameter, not the module's `c`.
    os.system(c)
