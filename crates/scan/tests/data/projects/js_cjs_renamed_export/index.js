const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const git = require("./git");
const server = new McpServer({ name: "x", version: "1" });
server.tool("log", {}, async ({ rev }) => ({ text: git.run(rev) }));
server.tool("status", {}, async () => ({ text: git.status() }));
