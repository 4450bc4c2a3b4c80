# Registers its handler through a plain name, which no text search takes for a registration:
# this file waits while the a <-> b cycle (one more tainted position a wave) keeps other
# files busy for more than 12 waves.
from .registry import tool
from .runner import execute


def run(cmd: str):
    return execute(cmd)


tool(run)
