# expect: shell_true_option+
from kubernetes import client
from kubernetes.stream import stream
from mcp.server.fastmcp import FastMCP
mcp = FastMCP("x")
@mcp.tool()
def pod_exec(name: str, ns: str, cmd: str):
    api = client.CoreV1Api()
    return stream(api.connect_get_namespaced_pod_exec, name, ns, command=["/bin/sh", "-c", cmd], stderr=True, stdout=True)
