# expect: exec_dynamic_string+
import os, subprocess, sys, asyncio
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Base:
    def run(self, c):
        return os.popen(c)
class Sub(Base):
    def go2(self, c):
        return 1, *super().run(c)
@mcp.tool()
def go(cmd: str):
    return Sub().go2(cmd)
