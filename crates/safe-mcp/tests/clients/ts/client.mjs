// The official TypeScript MCP SDK client (@modelcontextprotocol/sdk, the one Claude
// Desktop and Claude Code are built on) against one safe-mcp server, for
// crates/safe-mcp/tests/ts_client.rs.
//
// Usage: node client.mjs SPEC_JSON
//   SPEC_JSON: {"command": "...", "args": [...], "env": {...}, "calls": [{"tool", "arguments"}]}
//   A string argument "$plan_id" is replaced by the plan_id of the latest result that had one.
//
// It connects over stdio, lists the tools, compiles every inputSchema with the SDK's own
// validator (the client compiles every outputSchema itself when it lists tools), calls each
// tool of the spec in order and prints one JSON report on stdout:
//   {"tools": [names], "calls": [{tool, arguments, input_valid, isError, structured, error}],
//    "console": [everything the SDK wrote through console.*], "server_stderr": "..."}
// A call whose structuredContent does not fit the tool's outputSchema is an `error` (the SDK
// throws). The Rust test decides what passes; this script only reports.

const consoleOutput = [];
for (const level of ["log", "info", "debug", "warn", "error", "trace"]) {
  console[level] = (...args) => {
    consoleOutput.push({ level, text: args.map((a) => (typeof a === "string" ? a : String(a))).join(" ") });
  };
}

const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
const { AjvJsonSchemaValidator } = await import("@modelcontextprotocol/sdk/validation/ajv");

const spec = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({
  command: spec.command,
  args: spec.args,
  // The SDK passes only a small default environment; the server needs nothing else.
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...spec.env },
  stderr: "pipe",
});
let serverStderr = "";
transport.stderr?.on("data", (chunk) => {
  serverStderr += chunk.toString();
});

const client = new Client({ name: "safe-mcp-ts-client-test", version: "1.0.0" });
const report = { tools: [], calls: [], console: consoleOutput, server_stderr: "" };
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  report.tools = tools.map((t) => t.name);
  const validator = new AjvJsonSchemaValidator();
  const inputValidators = new Map(tools.map((t) => [t.name, validator.getValidator(t.inputSchema)]));
  let planId = null;
  for (const { tool, arguments: rawArgs } of spec.calls) {
    const args = JSON.parse(JSON.stringify(rawArgs), (_, v) => (v === "$plan_id" ? planId : v));
    const check = inputValidators.get(tool);
    const entry = { tool, arguments: args, input_valid: check ? check(args).valid : null };
    try {
      const result = await client.callTool({ name: tool, arguments: args });
      entry.isError = result.isError ?? false;
      entry.structured = result.structuredContent ?? null;
      const id = result.structuredContent?.detail?.plan_id;
      if (typeof id === "string") planId = id;
    } catch (e) {
      entry.error = String(e?.message ?? e);
    }
    report.calls.push(entry);
  }
} catch (e) {
  report.fatal = String(e?.stack ?? e);
} finally {
  await client.close().catch((e) => {
    report.fatal = report.fatal ?? `close: ${e}`;
  });
  report.server_stderr = serverStderr;
  process.stdout.write(JSON.stringify(report) + "\n");
}
