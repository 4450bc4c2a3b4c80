import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { handle } from "./handlers.mjs";
const server = new McpServer({ name: "x", version: "1" });
server.registerTool("run", { inputSchema: {} }, async ({ cmd }) => handle(cmd));
