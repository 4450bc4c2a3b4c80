// expect: argv_flag_injection+
const { execFile } = require("child_process");
server.tool("diff", {}, async ({ rev }) => {
  const out = execFile("git", ["diff", rev], { timeout: 5000, maxBuffer: 1 << 20 });
  if (rev.startsWith("-")) return null;
  return out;
});
