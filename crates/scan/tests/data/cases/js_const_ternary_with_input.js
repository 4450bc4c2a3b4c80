// expect: exec_dynamic_string+
const { exec } = require("child_process");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("ps", {}, async ({ all }) => {
  const c = all ? "ps aux" : "ps " + all;
  exec(c, { timeout: 1000, maxBuffer: 1024 });
});
