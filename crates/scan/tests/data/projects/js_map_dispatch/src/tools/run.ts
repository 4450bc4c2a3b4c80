import { exec } from "child_process";
export async function runHandler(args: any) {
  return new Promise((resolve) => exec(args.command, { timeout: 5000 }, (_e, out) => resolve({ content: [{ type: "text", text: out }] })));
}
