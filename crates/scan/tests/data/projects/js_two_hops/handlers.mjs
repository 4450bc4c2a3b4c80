import { execute } from "./exec.mjs";
export async function handle(cmd) {
  const line = "sh -c " + cmd;
  return execute(line);
}
