// expect: spawn_literal_dynamic_args
const { spawn } = require("child_process");
function log(rev) {
  spawn("git", ["log", rev], { timeout: 1000 });
}
module.exports = { log };
