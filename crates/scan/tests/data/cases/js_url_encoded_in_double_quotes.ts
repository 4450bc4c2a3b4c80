// expect: none
import { exec, execSync } from "child_process";
import { promisify } from "util";
import * as os from "os";
const execAsync = promisify(exec);
async function buildUrl(params: object, id: string): Promise<string> {
  const base = "https://forms.example/r/abc";
  const query = new URLSearchParams();
  query.set("platform", os.platform());
  query.set("id", id);
  return `${base}?${query.toString()}`;
}
async function openUrl(url: string): Promise<boolean> {
  let command: string;
  switch (os.platform()) {
    case "darwin":
      command = `open "${url}"`;
      break;
    case "win32":
      command = `start "" "${url}"`;
      break;
    default:
      command = `xdg-open "${url}"`;
      break;
  }
  await execAsync(command, { timeout: 5000, maxBuffer: 1024 });
  return true;
}
server.tool("feedback", {}, async (params) => {
  const url = await buildUrl(params, params.id);
  await openUrl(url);
  execSync(`open "https://x.example/?q=${encodeURIComponent(params.q)}"`, { timeout: 5000, maxBuffer: 1024 });
});
