const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const shell = require("./shell.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", {}, async (input) => {
  const script = input.script;
  return { text: shell.run(script) };
});
