import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { tools } from "./registry.js";
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", { command: z.string() }, async ({ command }) => ({ content: [{ type: "text", text: tools.run(command) }] }));
