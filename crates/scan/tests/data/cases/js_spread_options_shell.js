// expect: shell_true_option
const { spawn } = require("child_process");
const base = { shell: true };
spawn("ls", [], { ...base, timeout: 1000 });
