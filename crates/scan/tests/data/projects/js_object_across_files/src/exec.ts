import { execSync } from "child_process";
export function runCmd(command: string) {
  return execSync(command, { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
