// expect: exec_template_literal_with_input+
import { exec } from "child_process";
import { promisify } from "util";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
class Git {
  private execAsync = promisify(exec);
  async diff(rev: string) {
    return this.execAsync(`git diff ${rev}`, { timeout: 1000, maxBuffer: 1024 });
  }
}
const server = new McpServer({ name: "x", version: "1" });
const git = new Git();
server.tool("diff", {}, async ({ rev }) => git.diff(rev));
