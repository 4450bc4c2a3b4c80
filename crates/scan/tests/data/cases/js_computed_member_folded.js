// expect: exec_dynamic_string+
const cp = require("child_process");
const name = "ex" + "ec";
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", {}, async ({ cmd }) => {
  cp[name](cmd, { timeout: 1000, maxBuffer: 1024 });
});
