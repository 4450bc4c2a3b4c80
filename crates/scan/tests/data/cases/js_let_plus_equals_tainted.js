// expect: exec_dynamic_string+
const { exec } = require("child_process");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("ls", {}, async ({ dir }) => {
  let cmd = "ls";
  cmd += " " + dir;
  exec(cmd, { timeout: 1000, maxBuffer: 1024 });
});
