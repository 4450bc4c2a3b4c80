// expect: none
const m = "f" + "s";
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", {}, async ({ cmd }) => {
  require(m).exec(cmd);
});
