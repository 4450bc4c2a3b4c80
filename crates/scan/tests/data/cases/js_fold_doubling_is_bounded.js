// expect: exec_dynamic_string+
const { exec } = require("child_process");
const a0 = "x";
const a1 = a0 + a0; const a2 = a1 + a1; const a3 = a2 + a2; const a4 = a3 + a3;
const a5 = a4 + a4; const a6 = a5 + a5; const a7 = a6 + a6; const a8 = a7 + a7;
const a9 = a8 + a8; const a10 = a9 + a9; const a11 = a10 + a10; const a12 = a11 + a11;
const a13 = a12 + a12; const a14 = a13 + a13; const a15 = a14 + a14; const a16 = a15 + a15;
const a17 = a16 + a16; const a18 = a17 + a17; const a19 = a18 + a18; const a20 = a19 + a19;
const a21 = a20 + a20; const a22 = a21 + a21; const a23 = a22 + a22; const a24 = a23 + a23;
const a25 = a24 + a24; const a26 = a25 + a25; const a27 = a26 + a26; const a28 = a27 + a27;
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const server = new McpServer({ name: "x", version: "1" });
server.tool("run", {}, async ({ cmd }) => {
  require(a28).exec(cmd, { timeout: 1000, maxBuffer: 1024 });
  exec(a28 + cmd, { timeout: 1000, maxBuffer: 1024 });
});
