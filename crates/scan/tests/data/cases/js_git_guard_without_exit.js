// expect: argv_flag_injection+
const { execFile } = require("child_process");
server.tool("diff", {}, async ({ rev }) => {
  if (rev.startsWith("-")) {
    console.warn("odd revision");
  }
  return execFile("git", ["diff", rev], { timeout: 5000, maxBuffer: 1 << 20 });
});
