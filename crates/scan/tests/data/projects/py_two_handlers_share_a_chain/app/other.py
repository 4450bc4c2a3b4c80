from .registry import tool
from .a1 import a1


def run(cmd: str):
    a1('', cmd)


tool(run)
