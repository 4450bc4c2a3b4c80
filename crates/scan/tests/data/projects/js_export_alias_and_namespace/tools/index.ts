export * as ops from "./ops";
