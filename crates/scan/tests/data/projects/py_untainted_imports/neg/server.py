from mcp.server.fastmcp import FastMCP

from .shell import run, run_other

mcp = FastMCP("x")


@mcp.tool()
def status(verbose: bool) -> str:
    return run("git status")


def maintenance(cmd):
    return run_other(cmd)


if __name__ == "__main__":
    maintenance("git gc")
