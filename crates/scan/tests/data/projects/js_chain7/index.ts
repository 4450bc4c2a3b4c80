import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { f1 } from "./f1";
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", {}, async ({ cmd }) => ({ content: [{ type: "text", text: f1(cmd) }] }));
