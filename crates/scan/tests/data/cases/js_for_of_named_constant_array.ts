// expect: none
import { execSync } from "child_process";
const pythonCommands = process.platform === "win32" ? ["python", "py"] : ["python3", "python"];
for (const cmd of pythonCommands) {
  execSync(`${cmd} --version`, { timeout: 5000, maxBuffer: 1 << 20 });
}
