import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { ShellClient, SafeClient } from "./clients.js";
class Health {
  client = new ShellClient();
  uptime() {
    return this.client.run("uptime");
  }
}
class Tools {
  client = new SafeClient();
  server = new McpServer({ name: "x", version: "1" });
  constructor() {
    this.server.tool("lookup", { q: z.string() }, async ({ q }) => ({ content: [{ type: "text", text: this.client.run(q) }] }));
  }
}
new Health();
new Tools();
