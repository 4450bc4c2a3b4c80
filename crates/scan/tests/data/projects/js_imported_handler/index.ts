import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import runTool from "./run";
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", { command: z.string() }, runTool);
