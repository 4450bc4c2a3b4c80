import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { runGit } from "./git";
const server = new McpServer({ name: "x", version: "1" });
server.tool("status", {}, async ({ verbose }) => ({ text: await runGit("status") }));
export function internal(x: string) {
  return runGit(x);
}
