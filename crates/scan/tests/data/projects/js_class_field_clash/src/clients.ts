import { execSync, execFileSync } from "child_process";
export class ShellClient {
  run(cmd: string) {
    return execSync(cmd, { timeout: 5000, maxBuffer: 1 << 20 }).toString();
  }
}
export class SafeClient {
  run(arg: string) {
    return execFileSync("/usr/bin/safe-tool", ["--", arg], { timeout: 5000, maxBuffer: 1 << 20 }).toString();
  }
}
