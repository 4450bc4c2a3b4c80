// expect: exec_template_literal_with_input+
const { exec } = require("child_process");
server.tool("open", { q: z.string(), encoded: z.boolean() }, async ({ q, encoded }) => {
  var link = encodeURIComponent(q);
  if (encoded) {
    var link = q;
  }
  exec(`open "https://x.example/?q=${link}"`, { timeout: 5000, maxBuffer: 1024 });
});
