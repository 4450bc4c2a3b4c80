// expect: exec_template_literal_with_input
const { exec } = require("child_process");
server.tool("open", { q: z.string() }, async ({ q }) => {
  const params = new URLSearchParams();
  params.toString = () => q;
  exec(`open "https://x.example/?${params.toString()}"`, { timeout: 5000, maxBuffer: 1024 });
});
