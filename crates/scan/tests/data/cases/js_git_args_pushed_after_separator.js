// expect: spawn_literal_dynamic_args+
const { spawn } = require("child_process");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("diff", {}, async ({ path }) => {
  const args = ["diff", "--"];
  args.push(path);
  spawn("git", args, { timeout: 1000 });
});
