// expect: spawn_literal_dynamic_args
const { spawn } = require("child_process");
const dir = process.argv[2];
spawn("ls", [dir], { timeout: 1000 });
