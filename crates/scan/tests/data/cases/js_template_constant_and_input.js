// expect: exec_template_literal_with_input+
const { exec } = require("child_process");
const base = "git";
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("log", {}, async ({ rev }) => {
  exec(`${base} log ${rev}`, { timeout: 1000, maxBuffer: 1024 });
});
