// expect: spawn_literal_dynamic_args+ spawn_literal_dynamic_args+ argv_flag_injection+ argv_flag_injection+
const { execFile, spawn } = require("child_process");
server.tool("push", { image: z.string() }, async ({ image }) => {
  // docker's own options come before the subcommand; push runs no code through its options.
  execFile("docker", ["push", image], { timeout: 600000, maxBuffer: 1024 * 1024 });
  const args = ["pull"];
  args.push(image);
  spawn("docker", args, { timeout: 600000 });
  // A start can restore a checkpoint from a folder of the caller's choosing.
  execFile("docker", ["start", image], { timeout: 600000, maxBuffer: 1024 * 1024 });
  // The subcommand is not known once the array is added to at its front.
  const late = ["push"];
  late.unshift(image);
  spawn("docker", late, { timeout: 600000 });
});
