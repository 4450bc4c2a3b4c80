// expect: shell_true_option+ shell_true_option+ shell_true_option+
const { spawn, execFile } = require("child_process");
server.tool("run", {}, async ({ script }) => {
  spawn("env", ["FOO=1", "sh", "-c", script], { timeout: 5000 });
  execFile("timeout", ["5", "bash", "-c", script], { timeout: 5000, maxBuffer: 1 << 20 });
  return spawn("sudo", ["-u", "nobody", "/bin/sh", "-c", script], { timeout: 5000 });
});
