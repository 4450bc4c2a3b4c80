import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { runGit } from "./git.js";
const server = new McpServer({ name: "x", version: "1" });
server.tool("git", { args: z.string() }, async ({ args }) => {
  return { content: [{ type: "text", text: await runGit(args) }] };
});
