// expect: exec_dynamic_string+
const { exec } = require("child_process");
const { promisify } = require("util");
class Runner {
  constructor() {
    this.run = promisify(exec);
  }
  start(command) {
    return this.run(command, { timeout: 1000, maxBuffer: 1024 });
  }
}
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
const runner = new Runner();
server.tool("run", {}, async ({ command }) => runner.start(command));
