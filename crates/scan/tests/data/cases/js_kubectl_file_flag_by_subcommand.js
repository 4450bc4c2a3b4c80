// expect: argv_flag_injection+ spawn_literal_dynamic_args+
const { execFileSync } = require("child_process");
server.tool("apply", { file: z.string(), ns: z.string(), pod: z.string() }, async ({ file, ns, pod }) => {
  const args = ["apply"];
  args.push("-f", file);          // kubectl apply -f: a file name
  args.push("-n", ns);
  execFileSync("kubectl", args, { timeout: 1000, maxBuffer: 1024 });
  execFileSync("kubectl", ["logs", "-f", pod], { timeout: 1000, maxBuffer: 1024 });   // -f is --follow: pod can be an option
});
