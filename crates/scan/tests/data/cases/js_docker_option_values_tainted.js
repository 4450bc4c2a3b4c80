// expect: spawn_literal_dynamic_args+
const { execFile } = require("child_process");
server.tool("build", { image: z.string() }, async ({ image }) => {
  execFile("docker", ["build", "-t", image, "."], { timeout: 600000, maxBuffer: 1024 * 1024 });
});
