import { f3 } from "./f3";
export function f2(x: string): string {
  return f3(x);
}
