import { execSync } from "node:child_process";
export function run(command: string): string {
  return execSync(command, { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
export default function raw(command: string): string {
  return execSync(command, { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
