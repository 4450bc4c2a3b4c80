// expect: exec_dynamic_string+
const { exec } = require("child_process");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", {}, async ({ userInput }) => {
  const x = "a";
  let y = x;
  y = userInput;
  exec(y, { timeout: 1000, maxBuffer: 1024 });
});
