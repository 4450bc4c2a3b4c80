import { exec } from "child_process";
import { promisify } from "util";
const run = promisify(exec);
export async function runGit(a: string) {
  const { stdout } = await run(`git ${a}`, { timeout: 5000, maxBuffer: 1 << 20 });
  return stdout;
}
