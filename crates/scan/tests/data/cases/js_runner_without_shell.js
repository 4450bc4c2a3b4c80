// expect: spawn_literal_dynamic_args+
const { execFile } = require("child_process");
server.tool("run", {}, async ({ file }) => {
  return execFile("timeout", ["5", "cat", file], { timeout: 5000, maxBuffer: 1 << 20 });
});
