// expect: exec_file_dynamic+
const { fork } = require("child_process");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", {}, async ({ script }) => {
  fork(script, [], { timeout: 1000 });
});
