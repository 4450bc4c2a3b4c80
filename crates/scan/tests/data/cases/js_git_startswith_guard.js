// expect: spawn_literal_dynamic_args+
const { execFile } = require("child_process");
server.tool("diff", {}, async ({ rev }) => {
  if (rev.startsWith("-")) {
    throw new Error("revision must not start with -");
  }
  return execFile("git", ["diff", rev], { timeout: 5000, maxBuffer: 1 << 20 });
});
