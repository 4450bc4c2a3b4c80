import { execSync } from "node:child_process";
export function helper(x: string) {
  return execSync("ls " + x, { timeout: 5000, maxBuffer: 1 << 20 });
}
