import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { run } from "~/run.js";
const server = new McpServer({ name: "y", version: "1" });
server.registerTool("run", { inputSchema: {} }, async ({ command }) => run(command));
