# expect: argv_flag_injection+ argv_flag_injection+ argv_flag_injection+ argv_flag_injection+ argv_flag_injection+ spawn_literal_dynamic_args+ spawn_literal_dynamic_args+ spawn_literal_dynamic_args+ spawn_literal_dynamic_args+
import subprocess
from typing import List, Optional
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def top(namespace: Optional[str] = None, pod: str = "", local_port: int = 8080, remote: int = 80):
    cmd = ["kubectl", "top", "pods"]
    if namespace:
        cmd += ["-n", namespace]          # the value of -n: an operand
    cmd += ["-o", "json"]
    subprocess.check_output(cmd, timeout=5)
    grown = ["kubectl", "get", "pods"]
    grown += [pod]                        # a piece that input can start: flag injection
    subprocess.check_output(grown, timeout=5)
    appended = ["kubectl", "logs"]
    appended.append(pod)                  # likewise
    subprocess.check_output(appended, timeout=5)
    # An int the SDK validated starts with digits or '-' and digits: no option that runs code.
    subprocess.check_output(["kubectl", "port-forward", f"pod/{pod}", f"{local_port}:{remote}"], timeout=5)
    # A literal program with arguments added: flag injection when input can start them.
    subprocess.check_output(["kubectl"] + [pod], timeout=5)
    subprocess.check_output(["kubectl", "logs", "--"] + [pod], timeout=5)
    # kubectl's -f is a file name, except for logs (--follow).
    subprocess.check_output(["kubectl", "apply", "-f", pod], timeout=5)
    subprocess.check_output(["kubectl", "logs", "-f", pod], timeout=5)
    # A shell that runs only constants.
    subprocess.run("kubectl config view --minify", shell=True, timeout=5)
def helper(port: int, ref: str):
    # Not a handler: nothing checked the annotation.
    subprocess.run(["git", "log", f"{port}"], timeout=5)
@mcp.tool()
def call_helper(port: str):
    helper(port, "x")
