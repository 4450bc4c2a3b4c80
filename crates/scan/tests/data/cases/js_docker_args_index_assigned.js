// expect: argv_flag_injection+ unbounded_buffer
const { execFile } = require("child_process");
server.tool("push", { image: z.string(), sub: z.string() }, async ({ image, sub }) => {
  const args = ["push", image];
  args[0] = sub;
  execFile("docker", args, { timeout: 600000 });
});
