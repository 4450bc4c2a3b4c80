import { execSync } from "node:child_process";
function run(sub: string): string {
  return execSync("git " + sub, { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
export function gitStatus(): string {
  return run(process.env.GIT_STATUS_ARGS ?? "status");
}
