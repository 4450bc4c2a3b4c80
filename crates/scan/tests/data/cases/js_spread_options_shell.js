// expect: shell_true_option spawn_literal_dynamic_args
const { spawn } = require("child_process");
const base = { shell: true };
// The shell comes from a spread; the folder is not a constant.
function list(dir) {
  spawn("ls", [dir], { ...base, timeout: 1000 });
}
// A shell that runs only constants injects nothing.
spawn("ls", ["-la"], { ...base, timeout: 1000 });
