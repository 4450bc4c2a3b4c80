from mcp.server.fastmcp import FastMCP

from .kubectl import Kubectl

mcp = FastMCP("k8s")


@mcp.tool()
def logs(pod: str, namespace: str = "default") -> str:
    return Kubectl(namespace).logs(pod)
