// expect: exec_sync_dynamic_string
const { execSync } = require("child_process");
for (const cmd of ["python3", process.argv[2]]) {
  execSync(`${cmd} --version`, { timeout: 5000, maxBuffer: 1 << 20 });
}
