# expect: spawn_literal_dynamic_args+
import subprocess
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
class Scanner:
    @staticmethod
    def _validate_git_ref(base_ref: str) -> None:
        if base_ref.strip().startswith("-"):
            raise ValueError("must be a git ref")
    def diff(self, base_ref: str) -> str:
        try:
            self._validate_git_ref(base_ref)
        except ValueError as e:
            return str(e)
        return subprocess.run(["git", "diff", base_ref], capture_output=True, timeout=60).stdout
scanner = Scanner()
@mcp.tool()
def start_diff_scan(base_ref: str) -> str:
    return scanner.diff(base_ref)
