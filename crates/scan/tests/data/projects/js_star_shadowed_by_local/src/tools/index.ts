import { execFileSync } from "node:child_process";
export * from "./shell.js";
// The local export shadows the star re-export: callers of `run` get this one.
export function run(arg: string): string {
  return execFileSync("/usr/bin/safe-tool", ["--", arg], { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
export default function dispatch(arg: string): string {
  return execFileSync("/usr/bin/other-tool", ["--", arg], { timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
