// expect: eval_near_child_process+
const vm = require("node:vm");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("calc", {}, async ({ code }) => {
  return new vm.Script(code).runInThisContext();
});
