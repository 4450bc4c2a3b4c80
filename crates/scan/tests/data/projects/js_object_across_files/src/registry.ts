import { runCmd } from "./exec.js";
export const tools = { run: runCmd };
