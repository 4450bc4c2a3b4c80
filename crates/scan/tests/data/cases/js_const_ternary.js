// expect: none
const { exec } = require("child_process");
const isWin = process.platform === "win32";
const c = isWin ? "tasklist" : "ps aux";
exec(c, { timeout: 1000, maxBuffer: 1024 });
