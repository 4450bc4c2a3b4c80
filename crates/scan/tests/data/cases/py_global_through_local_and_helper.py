# expect: exec_dynamic_string+ exec_dynamic_string+ exec_dynamic_string+ shell_true_option+
import os, subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
current = "ls"
@mcp.tool()
def set_cmd(cmd: str):
    global current
    current = cmd
def run_direct():
    os.system(current)
def run_via_local():
    command = f"echo {current}"
    subprocess.run(command, shell=True, timeout=5)
def helper(c):
    os.system(c)
def run_via_helper():
    helper(current)
