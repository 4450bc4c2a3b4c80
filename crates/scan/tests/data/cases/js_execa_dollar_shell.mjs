// expect: shell_true_option+
import { $ } from "execa";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
const server = new McpServer({ name: "x", version: "1" });
server.tool("sh", {}, async ({ cmd }) => {
  await $({ shell: true })`${cmd}`;
});
