import { execFileSync } from "child_process";
export function runIn(cwd: string, program: string, ...argv: string[]) {
  return execFileSync(program, argv, { cwd, shell: true, timeout: 5000, maxBuffer: 1 << 20 }).toString();
}
