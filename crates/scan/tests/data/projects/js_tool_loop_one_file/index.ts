import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { execSync } from "child_process";
import { z } from "zod";
const runTool = {
  name: "run",
  schema: { command: z.string() },
  handler: async ({ command }: { command: string }) => ({ content: [{ type: "text" as const, text: execSync(command, { timeout: 5000, maxBuffer: 1 << 20 }).toString() }] }),
};
const server = new McpServer({ name: "x", version: "1" });
for (const t of [runTool]) server.tool(t.name, t.schema, t.handler);
