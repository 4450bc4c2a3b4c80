import { execSync } from "child_process";
function run(line: string) {
  return execSync(line, { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
export { run as runCommand };
