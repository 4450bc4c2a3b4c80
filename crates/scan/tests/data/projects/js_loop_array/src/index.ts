import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { runTool } from "./tools/run.js";
const server = new McpServer({ name: "x", version: "1" });
const tools = [runTool];
for (const t of tools) {
  server.tool(t.name, t.schema, t.handler);
}
