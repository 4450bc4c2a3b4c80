import { execSync } from "child_process";
export function runGit(a: string) {
  return execSync(`git ${a}`, { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
