import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import * as tools from "./lib/index.js";
const server = new Server({ name: "x", version: "1" }, { capabilities: { tools: {} } });
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name, arguments: args } = request.params;
  if (name === "shell") {
    return { content: [{ type: "text", text: tools.runShell(String(args?.command)) }] };
  }
  throw new Error("unknown tool");
});
