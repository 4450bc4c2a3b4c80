import { execSync } from "node:child_process";
export function runShell(command: string): string {
  return execSync(command, { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
