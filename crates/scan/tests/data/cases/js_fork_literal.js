// expect: none
const { fork } = require("child_process");
fork("./worker.js", [], { timeout: 1000 });
