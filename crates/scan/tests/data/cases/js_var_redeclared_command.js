// expect: exec_dynamic_string+
const { exec } = require("child_process");
server.tool("open", { q: z.string(), raw: z.boolean() }, async ({ q, raw }) => {
  if (!raw) {
    var command = `open "https://x.example/?q=${encodeURIComponent(q)}"`;
  } else {
    var command = `open ${q}`;
  }
  exec(command, { timeout: 5000, maxBuffer: 1024 });
});
