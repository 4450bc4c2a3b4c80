// expect: spawn_literal_dynamic_args+ spawn_literal_dynamic_args+ argv_flag_injection+
const { execFile } = require("child_process");
server.tool("log", {}, async ({ n, path, flag }) => {
  execFile("git", ["log", `--max-count=${n}`], { timeout: 5000, maxBuffer: 1 << 20 });
  execFile("git", ["show", "HEAD:" + path], { timeout: 5000, maxBuffer: 1 << 20 });
  return execFile("git", ["log", `-${flag}`], { timeout: 5000, maxBuffer: 1 << 20 });
});
