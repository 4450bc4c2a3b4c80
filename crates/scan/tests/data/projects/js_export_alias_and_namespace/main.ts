import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ops } from "./tools/index";
const server = new McpServer({ name: "x", version: "1" });
server.tool("grep", {}, async ({ pattern, path }) => ({ text: ops.runCommand(`grep ${pattern} ${path}`) }));
