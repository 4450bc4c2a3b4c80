import { exec } from "child_process";
export function run(c: string) { exec(c, { timeout: 5000, maxBuffer: 1024 }); }
