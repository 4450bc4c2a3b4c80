// expect: argv_flag_injection+ unbounded_buffer
const { execFile } = require("child_process");
function withHost(list, host) { list.unshift(host); return list; }
server.tool("push", { image: z.string(), host: z.string() }, async ({ image, host }) => {
  const args = ["push", image];
  withHost(args, host);
  execFile("docker", args, { timeout: 600000 });
});
