import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { GitClient } from "./git-client.js";
const server = new McpServer({ name: "x", version: "1" });
const client = new GitClient();
server.tool("run", { cmd: z.string() }, async ({ cmd }) => ({ content: [{ type: "text", text: client.run(cmd) }] }));
