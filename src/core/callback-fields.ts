/**
 * Callback field spellings (U-CB-FIELDS): the interface's idempotency table writes `txid` and
 * `chain`; the provider's public documentation writes `txId` and `chainName`. Real callbacks may
 * carry either, so every reader of a payload reads both as one field.
 */
export const FIELD_ALIASES: Readonly<Record<string, readonly string[]>> = {
  txid: ['txId'],
  chain: ['chainName'],
};

/**
 * A payload field by its interface name, or by an alias when the interface name is absent.
 *
 * @example callbackField({ txId: 'ab12' }, 'txid') // 'ab12'
 */
export function callbackField(payload: Readonly<Record<string, unknown>>, name: string): unknown {
  if (payload[name] !== undefined) return payload[name];
  for (const alias of FIELD_ALIASES[name] ?? []) if (payload[alias] !== undefined) return payload[alias];
  return undefined;
}

/** The interface's name of a field, for a field spelt either way (`txId` → `txid`). */
export function interfaceName(field: string): string {
  for (const [name, aliases] of Object.entries(FIELD_ALIASES)) if (aliases.includes(field)) return name;
  return field;
}
