/** Where encrypted data travels: request `data` field, envelope `data`, callback body. */
export const DIRECTIONS = ['request', 'response', 'callback'] as const;
/** One of the three encrypted channels of the interface. */
export type Direction = (typeof DIRECTIONS)[number];
