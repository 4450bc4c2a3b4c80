import { f7 } from "./f7";
export function f6(x: string): string {
  return f7(x);
}
