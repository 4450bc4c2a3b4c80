// expect: exec_template_literal_with_input+
const { exec } = require("child_process");
function link(q) { return `https://x.example/?q=${encodeURIComponent(q)}`; }
server.tool("open", { q: z.string() }, async ({ q }) => {
  exec(`open "${link(q)}"`, { timeout: 5000, maxBuffer: 1024 });
});
function link(q) { return q; }
