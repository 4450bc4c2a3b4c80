// expect: argv_flag_injection+
const { spawn } = require("child_process");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("show", {}, async ({ rev }) => {
  const args = ["show"].concat(rev);
  spawn("git", args, { timeout: 1000 });
});
