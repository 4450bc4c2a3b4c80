// expect: argv_flag_injection+ unbounded_buffer
const { execFile } = require("child_process");
server.tool("push", { image: z.string(), opt: z.string() }, async ({ image, opt }) => {
  const args = ["push", image];
  const view = args;
  view.unshift(opt);
  execFile("docker", args, { timeout: 600000 });
});
