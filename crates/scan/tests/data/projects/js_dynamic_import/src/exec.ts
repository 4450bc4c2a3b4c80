import { execSync } from "child_process";
export function runCommand(command: string) {
  return execSync(command, { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
