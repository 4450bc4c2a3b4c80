import { f2 } from "./f2";
export function f1(x: string): string {
  return f2(x);
}
