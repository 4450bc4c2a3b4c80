import { ShellClient } from "./shell-client.js";
export const client = new ShellClient();
