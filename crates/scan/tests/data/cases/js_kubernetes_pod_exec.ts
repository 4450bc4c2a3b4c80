// expect: shell_true_option+
import * as k8s from "@kubernetes/client-node";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
const server = new McpServer({ name: "x", version: "1" });
const kexec = new k8s.Exec(new k8s.KubeConfig());
server.tool("pod_exec", {}, async ({ ns, pod, command }) => {
  await kexec.exec(ns, pod, "main", ["/bin/sh", "-c", command], null, null, null, false);
});
