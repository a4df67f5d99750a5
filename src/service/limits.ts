/** Deepest JSON nesting the emulator accepts in a request (U-LIMITS); deeper is refused, never recursed into. */
export const MAX_REQUEST_DEPTH = 64;

/**
 * Is a parsed JSON value nested deeper than `max` levels? Walks with an explicit stack, so a
 * hostile value cannot overflow the call stack here (the schema validator would).
 *
 * @example nestedDeeperThan(JSON.parse('[[[1]]]'), 2) // true
 */
export function nestedDeeperThan(value: unknown, max = MAX_REQUEST_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}
