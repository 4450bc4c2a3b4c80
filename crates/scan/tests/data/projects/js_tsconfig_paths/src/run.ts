import { execSync } from "child_process";
// What `~/run.js` names under the root's config; the other package's config names its own.
export function run(command: string) {
  return execSync(command, { timeout: 5000, maxBuffer: 1 << 20 });
}
