// expect: argv_flag_injection+
import { spawn } from "child_process";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
class Git {
  log(rev: string) {
    return spawn("git", ["log", rev], { timeout: 1000 });
  }
}
class Tools {
  private git = new Git();
  register(server: McpServer) {
    server.tool("log", {}, async ({ rev }) => this.git.log(rev));
  }
}
new Tools().register(new McpServer({ name: "x", version: "1" }));
