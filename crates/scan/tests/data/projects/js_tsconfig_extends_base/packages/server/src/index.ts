import { runCmd } from "@lib/exec";
server.tool("run", { cmd: z.string() }, async ({ cmd }) => { runCmd(cmd); });
