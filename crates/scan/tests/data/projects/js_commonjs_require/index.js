const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const git = require("./git");
const { diff } = require("./git");
const server = new McpServer({ name: "x", version: "1" });
server.tool("log", {}, async ({ rev }) => ({ text: git.log(rev) }));
server.tool("diff", {}, async ({ rev }) => ({ text: diff(rev) }));
