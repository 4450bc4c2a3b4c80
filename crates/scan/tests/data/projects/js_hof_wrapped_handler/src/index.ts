import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { runHandler } from "./tools/run.js";
function withErrors<T>(fn: (args: T) => Promise<any>) {
  return async (args: T) => {
    try { return await fn(args); } catch (e) { return { content: [{ type: "text" as const, text: String(e) }], isError: true }; }
  };
}
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", { command: z.string() }, withErrors(runHandler));
