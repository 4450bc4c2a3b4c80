import { execSync } from "child_process";
export default async function ({ command }: { command: string }) {
  return { text: execSync(command, { timeout: 5000, maxBuffer: 1 << 20 }).toString() };
}
