const { execSync } = require("child_process");
function runD(cmd) {
  return execSync(cmd, { timeout: 5000, maxBuffer: 1 << 20 });
}
module.exports = { runD };
