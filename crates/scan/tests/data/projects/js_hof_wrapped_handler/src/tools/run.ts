import { execSync } from "child_process";
export async function runHandler({ command }: { command: string }) {
  return { content: [{ type: "text" as const, text: execSync(command, { timeout: 5000, maxBuffer: 1 << 20 }).toString() }] };
}
