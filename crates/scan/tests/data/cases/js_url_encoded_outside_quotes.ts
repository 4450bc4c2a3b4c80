// expect: exec_template_literal_with_input+ exec_sync_dynamic_string+ exec_template_literal_with_input+ exec_template_literal_with_input+
import { exec, execSync } from "child_process";
server.tool("open", { q: z.string() }, async ({ q }) => {
  // URL-encoded text holds `&`, `(` and `'`: shell syntax outside double quotes.
  exec(`open https://x.example/?q=${encodeURIComponent(q)}`, { timeout: 5000, maxBuffer: 1024 });
  // encodeURI leaves `$` and `;`.
  execSync(`open "https://x.example/?q=${encodeURI(q)}"`, { timeout: 5000, maxBuffer: 1024 });
  // Single quotes around it are not judged.
  exec(`open '${encodeURIComponent(q)}'`, { timeout: 5000, maxBuffer: 1024 });
  // The raw input beside the encoded part.
  exec(`open "${encodeURIComponent(q)}" ${q}`, { timeout: 5000, maxBuffer: 1024 });
});
