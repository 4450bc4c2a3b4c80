import { exec } from "node:child_process";
export function execute(line) {
  return new Promise((resolve) => exec(line, { timeout: 5000, maxBuffer: 1 << 20 }, (_e, out) => resolve(out)));
}
