// expect: exec_dynamic_string+
const { exec } = require("child_process");
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { CallToolRequestSchema } = require("@modelcontextprotocol/sdk/types.js");
const server = new Server({ name: "x", version: "1" }, { capabilities: { tools: {} } });
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const cmd = request.params.arguments.command;
  exec(cmd, { timeout: 1000, maxBuffer: 1024 });
});
