const { spawnSync } = require("child_process");
exports.run = function (script) {
  return spawnSync("bash", ["-c", script], { timeout: 5000, maxBuffer: 1 << 20 });
};
