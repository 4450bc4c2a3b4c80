import { runCommand } from "./exec.js";
export default runCommand;
