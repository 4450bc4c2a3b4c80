import { run } from "@/run";
server.tool("run", { cmd: z.string() }, async ({ cmd }) => { run(cmd); });
