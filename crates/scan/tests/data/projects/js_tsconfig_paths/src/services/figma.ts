import { run } from "@utils";
export async function fetchFile(url: string) {
  return run(`curl -s ${url}`);
}
