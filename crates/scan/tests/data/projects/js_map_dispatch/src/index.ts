import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { runHandler } from "./tools/run.js";
const handlers: Record<string, (args: any) => Promise<any>> = { run: runHandler };
const server = new Server({ name: "x", version: "1" }, { capabilities: { tools: {} } });
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const handler = handlers[request.params.name];
  if (!handler) throw new Error("unknown");
  return handler(request.params.arguments);
});
