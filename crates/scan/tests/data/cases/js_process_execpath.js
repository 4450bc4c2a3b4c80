// expect: spawn_literal_dynamic_args
const { spawn } = require("child_process");
function runScript(file) {
  return spawn(process.execPath, [file], { timeout: 5000 });
}
