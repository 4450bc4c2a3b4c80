export * from "./shell.js";
export * from "./git.js";
