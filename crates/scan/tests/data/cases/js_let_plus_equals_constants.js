// expect: none
const { exec } = require("child_process");
function update(verbose) {
  let cmd = "pod repo update";
  if (verbose) cmd += " --verbose";
  exec(cmd, { timeout: 1000, maxBuffer: 1024 });
}
