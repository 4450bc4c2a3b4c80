// expect: exec_dynamic_string
const { exec } = require("child_process");
function execAsync(command) {
  return exec(command, { timeout: 5000, maxBuffer: 1 << 20 });
}
execAsync("uptime");
process.argv.slice(2).forEach(execAsync);
