// expect: exec_dynamic_string+
const m = "child_" + "process";
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", {}, async ({ cmd }) => {
  require(m).exec(cmd, { timeout: 1000, maxBuffer: 1024 });
});
