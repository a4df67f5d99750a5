/** Adds items not yet present, keeping first-seen order. */
export function union<T>(...lists: T[][]): T[] {
  return [...new Set(lists.flat())];
}
