import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", { command: z.string() }, async ({ command }) => {
  const { runCommand } = await import("./exec.js");
  return { content: [{ type: "text", text: runCommand(command) }] };
});
server.tool("run2", { command: z.string() }, async ({ command }) => {
  const mod = await import("./exec.js");
  return { content: [{ type: "text", text: mod.runCommand(command) }] };
});
