import { execSync } from "child_process";
import { z } from "zod";
export const runTool = {
  name: "run",
  schema: { command: z.string() },
  handler: async ({ command }: { command: string }) => ({
    content: [{ type: "text", text: execSync(command, { timeout: 5000 }).toString() }],
  }),
};
