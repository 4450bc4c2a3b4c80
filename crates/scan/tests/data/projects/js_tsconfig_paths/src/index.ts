import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { fetchFile } from "~/services/figma.js";
const server = new McpServer({ name: "x", version: "1" });
server.registerTool("fetch", { inputSchema: {} }, async ({ url }) => fetchFile(url));
