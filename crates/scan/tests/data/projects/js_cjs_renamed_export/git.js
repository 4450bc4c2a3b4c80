const cp = require("child_process");
function run(sub) {
  return cp.execSync("git " + sub, { timeout: 5000, maxBuffer: 1 << 20 });
}
function safeRun(rev) {
  return cp.execFileSync("git", ["log", "--", rev], { timeout: 5000, maxBuffer: 1 << 20 });
}
function status() {
  return run(process.env.GIT_STATUS_ARGS ?? "status");
}
module.exports = { run: safeRun, status };
