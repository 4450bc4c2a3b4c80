// The official TypeScript MCP SDK client (@modelcontextprotocol/sdk, the one Claude
// Desktop and Claude Code are built on) against one safe-mcp server, for
// crates/safe-mcp/tests/ts_client.rs.
//
// Usage: node client.mjs SPEC_JSON
//   SPEC_JSON: {"command": "...", "args": [...], "env": {...}, "calls": [{"tool", "arguments"}]}
//   (stdio), or {"url": "http://127.0.0.1:PORT/mcp", "token": "...", "bad_token": "...",
//   "calls": [...]} (Streamable HTTP, the token sent as `Authorization: Bearer`).
//   A string argument "$plan_id" is replaced by the plan_id of the latest result that had one.
//
// It connects over stdio or HTTP, lists the tools, compiles every inputSchema with the SDK's own
// validator (the client compiles every outputSchema itself when it lists tools), calls each
// tool of the spec in order and prints one JSON report on stdout:
//   {"tools": [names], "calls": [{tool, arguments, input_valid, isError, structured, error}],
//    "console": [everything the SDK wrote through console.*], "server_stderr": "...",
//    "transport_errors": [what the transport reported through onerror, such as a GET it
//    could not open], "bad_token": {"error", "code"} (over HTTP with "bad_token": what the
//    SDK threw when it connected with that token, and the HTTP status it carries)}
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
const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { AjvJsonSchemaValidator } = await import("@modelcontextprotocol/sdk/validation/ajv");

const spec = JSON.parse(process.argv[2]);
/** The transport to the server the spec names, over HTTP with `token`. */
function httpTransport(token) {
  return new StreamableHTTPClientTransport(new URL(spec.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
}
const transport = spec.url
  ? httpTransport(spec.token)
  : new StdioClientTransport({
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
const report = { tools: [], calls: [], console: consoleOutput, server_stderr: "", transport_errors: [] };
client.onerror = (e) => report.transport_errors.push(String(e?.message ?? e));
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
  if (spec.bad_token !== undefined) {
    const refused = new Client({ name: "safe-mcp-ts-client-test", version: "1.0.0" });
    report.bad_token = {};
    try {
      await refused.connect(httpTransport(spec.bad_token));
      report.bad_token.tools = (await refused.listTools()).tools.map((t) => t.name);
    } catch (e) {
      report.bad_token.error = String(e?.message ?? e);
      report.bad_token.code = e?.code ?? null;
    }
    await refused.close().catch(() => {});
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
