import { f4 } from "./f4";
export function f3(x: string): string {
  return f4(x);
}
