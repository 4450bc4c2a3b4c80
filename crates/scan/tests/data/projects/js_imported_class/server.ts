import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { GitClient } from "./client";
const server = new McpServer({ name: "x", version: "1" });
const client = new GitClient();
server.tool("show", {}, async ({ rev }) => ({ text: await client.show(rev) }));
