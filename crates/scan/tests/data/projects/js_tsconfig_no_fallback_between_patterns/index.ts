import { run } from "@/tools/run";
server.tool("run", { cmd: z.string() }, async ({ cmd }) => { run(cmd); });
