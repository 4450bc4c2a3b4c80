import { runCmd } from "utils/exec";
server.tool("run", { cmd: z.string() }, async ({ cmd }) => { runCmd(cmd); });
