export * from "./shell.js";
export { helper as aid } from "./helper.js";
