import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import dispatch, { run } from "./tools/index.js";
const server = new McpServer({ name: "x", version: "1" });
server.tool("lookup", { q: z.string() }, async ({ q }) => ({ content: [{ type: "text", text: run(q) }] }));
server.tool("other", { q: z.string() }, async ({ q }) => ({ content: [{ type: "text", text: dispatch(q) }] }));
