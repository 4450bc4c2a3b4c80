// expect: none
const { exec } = require("child_process");
const base = "git";
const sub = "status";
exec(`${base} ${sub} --short`, { timeout: 1000, maxBuffer: 1024 });
