// expect: none
const { spawn } = require("child_process");
const base = { shell: false };
spawn("ls", [], { ...base, timeout: 1000 });
