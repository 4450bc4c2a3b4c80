// expect: none
const { execFile } = require("child_process");
const limits = { timeout: 1000, maxBuffer: 1024 };
execFile("ls", ["-l"], { ...limits });
