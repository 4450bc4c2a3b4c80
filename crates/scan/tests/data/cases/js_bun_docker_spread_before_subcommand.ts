// expect: argv_flag_injection+ argv_flag_injection+
server.tool("push", { image: z.string(), opts: z.array(z.string()) }, async ({ image, opts }) => {
  const proc = Bun.spawn(["docker", ...opts, "push", image], { timeout: 600000 });
  await proc.exited;
  const p2 = Bun.spawn({ cmd: ["docker", ...opts, "pull", image], timeout: 600000 });
});
