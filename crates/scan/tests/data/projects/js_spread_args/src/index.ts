import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { runIn } from "./exec.js";
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", { argv: z.array(z.string()) }, async ({ argv }) => ({ content: [{ type: "text", text: runIn("/tmp", ...argv) }] }));
