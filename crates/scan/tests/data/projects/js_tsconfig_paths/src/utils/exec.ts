import { execSync } from "child_process";
export function run(command: string) {
  return execSync(command, { timeout: 5000, maxBuffer: 1 << 20 });
}
