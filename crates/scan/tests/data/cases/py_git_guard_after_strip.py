# expect: spawn_literal_dynamic_args+ spawn_literal_dynamic_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def diff(base_ref: str, tag: str):
    if base_ref.strip().startswith("-"):
        raise ValueError("bad ref")
    subprocess.run(["git", "diff", base_ref], timeout=5)
    return subprocess.run(["docker", "push", f"{REPOSITORY}:{tag}"], timeout=5)
REPOSITORY = "123.dkr.ecr.example.com/app"
