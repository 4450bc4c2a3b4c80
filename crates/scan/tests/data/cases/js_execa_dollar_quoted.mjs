// expect: none
import { $ } from "execa";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
const server = new McpServer({ name: "x", version: "1" });
server.tool("ls", {}, async ({ dir }) => {
  await $`ls ${dir}`;
});
