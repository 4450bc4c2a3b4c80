const cp = require("child_process");
function log(rev) {
  return cp.execFileSync("git", ["log", rev], { timeout: 5000, maxBuffer: 1 << 20 });
}
function diff(rev) {
  return cp.execSync(`git diff ${rev}`, { timeout: 5000, maxBuffer: 1 << 20 });
}
module.exports = { log, diff };
