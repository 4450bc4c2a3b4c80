import { f5 } from "./f5";
export function f4(x: string): string {
  return f5(x);
}
