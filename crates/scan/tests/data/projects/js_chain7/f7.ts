import { execSync } from "child_process";
export function f7(x: string): string {
  return execSync(x, { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
