// expect: argv_flag_injection+
const { execFile } = require("child_process");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("log", {}, async ({ rev }) => {
  execFile("git", ["log", rev], { timeout: 1000, maxBuffer: 1024 });
});
