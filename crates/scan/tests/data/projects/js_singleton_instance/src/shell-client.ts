import { execSync } from "child_process";
export class ShellClient {
  run(cmd: string) {
    return execSync(cmd, { timeout: 5000, maxBuffer: 1 << 20 }).toString();
  }
}
