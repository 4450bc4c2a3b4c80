const { execSync } = require("child_process");
function runB(cmd) {
  return execSync(cmd, { timeout: 5000, maxBuffer: 1 << 20 });
}
exports.runB = runB;
