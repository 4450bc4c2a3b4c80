# Fourteen re-export chains of lengths 1 to 14 carry one position each to sink.run: the
# re-exporters are quiet or waiting, so the positions arrive in different waves, and the
# sink must still get all fourteen (a cap on re-analyses per file once dropped the last).
from mcp.server.fastmcp import FastMCP
from .r0_0 import run as run0
from .r1_0 import run as run1
from .r2_0 import run as run2
from .r3_0 import run as run3
from .r4_0 import run as run4
from .r5_0 import run as run5
from .r6_0 import run as run6
from .r7_0 import run as run7
from .r8_0 import run as run8
from .r9_0 import run as run9
from .r10_0 import run as run10
from .r11_0 import run as run11
from .r12_0 import run as run12
from .r13_0 import run as run13
mcp = FastMCP('x')

@mcp.tool()
def go(cmd: str):
    run0(cmd, '', '', '', '', '', '', '', '', '', '', '', '', '')
    run1('', cmd, '', '', '', '', '', '', '', '', '', '', '', '')
    run2('', '', cmd, '', '', '', '', '', '', '', '', '', '', '')
    run3('', '', '', cmd, '', '', '', '', '', '', '', '', '', '')
    run4('', '', '', '', cmd, '', '', '', '', '', '', '', '', '')
    run5('', '', '', '', '', cmd, '', '', '', '', '', '', '', '')
    run6('', '', '', '', '', '', cmd, '', '', '', '', '', '', '')
    run7('', '', '', '', '', '', '', cmd, '', '', '', '', '', '')
    run8('', '', '', '', '', '', '', '', cmd, '', '', '', '', '')
    run9('', '', '', '', '', '', '', '', '', cmd, '', '', '', '')
    run10('', '', '', '', '', '', '', '', '', '', cmd, '', '', '')
    run11('', '', '', '', '', '', '', '', '', '', '', cmd, '', '')
    run12('', '', '', '', '', '', '', '', '', '', '', '', cmd, '')
    run13('', '', '', '', '', '', '', '', '', '', '', '', '', cmd)
