from .registry import tool
from .runner import execute


def run(cmd: str):
    return execute(cmd)


tool(run)
