const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("d", {}, async ({ cmd }) => ({ text: require("./lib/d").runD(cmd) }));
