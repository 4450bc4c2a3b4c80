const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const runB = require("./lib/b").runB;
const server = new McpServer({ name: "x", version: "1" });
server.tool("b", {}, async ({ cmd }) => ({ text: runB(cmd) }));
