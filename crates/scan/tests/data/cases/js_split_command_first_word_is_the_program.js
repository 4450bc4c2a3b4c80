// expect: argv_flag_injection+ spawn_dynamic_file_args+
const { spawn } = require("child_process");
function run(command) {
  const [cmd, ...args] = command.split(" ");
  return spawn(cmd, args, { timeout: 1000 });
}
function runAny(command) {
  const [cmd, ...args] = command.split(" ");
  return spawn(cmd, args, { timeout: 1000 });
}
server.tool("pf", { pod: z.string(), c: z.string() }, async ({ pod, c }) => {
  run(`kubectl port-forward ${pod} 8080:80`);
  run(`kubectl logs ${pod}`);
  // A caller picks the program here: it stays a non-literal program.
  runAny(c);
  runAny(`kubectl get ${pod}`);
});
server.tool("pf2", { ns: z.string(), pod: z.string() }, async ({ ns, pod }) => {
  let command = `kubectl port-forward`;
  if (ns) {
    command += ` -n ${ns}`;
  }
  command += ` ${pod} 8080:80`;
  return run(command);
});
