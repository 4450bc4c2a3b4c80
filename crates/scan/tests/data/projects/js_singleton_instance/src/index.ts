import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { client } from "./instance.js";
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", { cmd: z.string() }, async ({ cmd }) => ({ content: [{ type: "text", text: client.run(cmd) }] }));
