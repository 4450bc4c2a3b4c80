import { execFileSync } from "node:child_process";
export function run(command: string): string {
  return execFileSync("/usr/local/bin/sandbox", [command], { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
