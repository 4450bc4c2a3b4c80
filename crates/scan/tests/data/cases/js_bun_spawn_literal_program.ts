// expect: spawn_literal_dynamic_args+ os_system_equivalent+
server.tool("log", {}, async ({ rev, program }) => {
  Bun.spawn(["git", "log", "--", rev]);
  return Bun.spawn([program, rev]);
});
