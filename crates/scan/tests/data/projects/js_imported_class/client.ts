import { exec } from "child_process";
export class GitClient {
  show(rev: string) {
    return new Promise((resolve) => exec(`git show ${rev}`, { timeout: 5000, maxBuffer: 1 << 20 }, (_e, out) => resolve(out)));
  }
}
