// expect: argv_flag_injection+ exec_template_literal_with_input+
const { exec, execFile } = require("child_process");
server.tool("fetch", { remote: z.string() }, async ({ remote }) => {
  exec(`git fetch "${encodeURIComponent(remote)}"`, { timeout: 5000, maxBuffer: 1024 });
  execFile("git", ["fetch", encodeURIComponent(remote)], { timeout: 5000, maxBuffer: 1024 });
});
