// expect: argv_flag_injection+
const { execFile } = require("child_process");
server.tool("build", { context: z.string() }, async ({ context }) => {
  execFile("docker", ["build", "-t", "app", context], { timeout: 600000, maxBuffer: 1024 * 1024 });
});
