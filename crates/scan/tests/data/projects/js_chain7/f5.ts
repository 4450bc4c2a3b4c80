import { f6 } from "./f6";
export function f5(x: string): string {
  return f6(x);
}
