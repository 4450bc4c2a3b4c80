// expect: spawn_literal_dynamic_args+ argv_flag_injection+
const { execFile } = require("child_process");
server.tool("log", {}, async ({ since, rev }) => {
  execFile("git", ["log", "--since", since], { timeout: 5000, maxBuffer: 1 << 20 });
  return execFile("git", ["log", "--oneline", rev], { timeout: 5000, maxBuffer: 1 << 20 });
});
