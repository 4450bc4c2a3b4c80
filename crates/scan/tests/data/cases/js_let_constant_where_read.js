// expect: exec_sync_dynamic_string+ exec_sync_dynamic_string+ exec_sync_dynamic_string+ exec_sync_dynamic_string+ exec_sync_dynamic_string+
const { execSync } = require("child_process");
server.tool("ctx", { op: z.string(), name: z.string(), o: z.string() }, async ({ op, name, o }) => {
  let command = "";
  switch (op) {
    case "list":
      command = "kubectl config get-contexts";
      if (o === "name") { command += " -o name"; }
      execSync(command, { timeout: 1, maxBuffer: 1 });   // constant: no finding
      break;
    case "use":
      command = `kubectl config use-context "${name}"`;
      execSync(command, { timeout: 1, maxBuffer: 1 });   // finding
      break;
  }
  let c2 = "ls";
  for (const x of [1, 2]) {
    execSync(c2, { timeout: 1, maxBuffer: 1 });          // finding: the loop writes it after
    c2 = name;
  }
  let c3 = "ls";
  if (o) { c3 = name; }
  execSync(c3, { timeout: 1, maxBuffer: 1 });            // finding
  let c4 = name;
  c4 = "ls";
  execSync(c4, { timeout: 1, maxBuffer: 1 });            // constant: no finding
  let c5 = "ls";
  const later = () => { c5 = name; };
  later();
  execSync(c5, { timeout: 1, maxBuffer: 1 });            // finding: a callback writes it
  let c6 = "ls";
  try { c6 = "ps"; } catch (e) { c6 = name; }
  execSync(c6, { timeout: 1, maxBuffer: 1 });            // finding
});
