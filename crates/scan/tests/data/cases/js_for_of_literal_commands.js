// expect: none
const { execSync } = require("child_process");
for (const cmd of ["python3", "python"]) {
  execSync(`${cmd} --version`, { timeout: 5000, maxBuffer: 1 << 20 });
}
