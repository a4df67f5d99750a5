import { LosslessNumber, type ExactJson } from '../../core/exact-json.js';
import { validateSchema } from '../../core/schemas.js';
import { describeIssues, isFinding, issueRules, pass, fail, preview, undecryptableCallback, type Check } from './check.js';
import { callbacksOf, openCallback } from './callback-support.js';

/** U-CB-FIELDS: the provider's documentation spells these fields differently; both name one field. */
const SPELLINGS: Readonly<Record<string, readonly string[]>> = { txid: ['txid', 'txId'], chain: ['chain', 'chainName'] };

/** The interface's name of a field, whichever spelling a payload or a suite uses. */
function interfaceName(field: string): string {
  return Object.entries(SPELLINGS).find(([, names]) => names.includes(field))?.[0] ?? field;
}

/** The payload with every field under its interface name (txId → txid, chainName → chain), for the schema. */
export function withInterfaceNames(payload: Record<string, ExactJson>): Record<string, ExactJson> {
  const out: Record<string, ExactJson> = {};
  for (const [field, value] of Object.entries(payload)) {
    const name = interfaceName(field);
    if (name === field || !Object.hasOwn(payload, name)) out[name] = value;
    if (name !== field && Object.hasOwn(payload, name)) out[field] = value;
  }
  return out;
}

/**
 * The value's text for comparison: a JSON number and a decimal string with the same digits are one
 * amount (U-CB-FIELDS leaves the form open); other values compare as their text.
 */
function comparable(value: ExactJson | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value instanceof LosslessNumber) return value.value;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * `callback-decrypts`: each body decrypts with the merchant's public key to a valid payload of the
 * emitted type; `fields` compares fields exactly (digits kept), txid/txId and chain/chainName being
 * one field and a number equal to a decimal string with the same digits (U-CB-FIELDS).
 */
export const callbackDecryptsCheck: Check = {
  id: 'callback-decrypts',
  title: 'callback decrypts with the public key',
  rules: ['CB-DECRYPT', 'CRYPTO-SAME'],
  needs: 'callbacks',
  run(ctx) {
    const collected = callbacksOf(ctx);
    if (isFinding(collected)) return [collected];
    const { callbacks, target } = collected;
    for (const [i, callback] of callbacks.entries()) {
      const opened = openCallback(callback, target);
      if ('error' in opened) return [undecryptableCallback(i + 1, opened.error)];
      const payload = withInterfaceNames(opened.value);
      const issues = validateSchema('CallbackPayload', payload);
      if (issues.length > 0) return [fail(`delivery ${i + 1} payload ${preview(opened.text)}: ${describeIssues(issues)}`, issueRules(issues))];
      const type = ctx.step.emit?.type;
      if (type !== undefined && String(opened.value.type) !== String(type)) return [fail(`delivery ${i + 1} has type ${String(opened.value.type)}, the event emitted was type ${type}`)];
      const fields = (ctx.params.fields ?? {}) as Record<string, ExactJson>;
      for (const [field, want] of Object.entries(fields)) {
        const got = comparable(payload[interfaceName(field)]);
        const wanted = comparable(want);
        if (got !== wanted) return [fail(`delivery ${i + 1}: ${field} is ${got ?? 'absent'}, expected ${wanted} exactly${got !== undefined && wanted !== undefined && Number(got) === Number(wanted) ? ' (the digits were rounded: parsed as a binary float?)' : ''}`)];
      }
    }
    return [pass(`${callbacks.length} deliveries decrypt to valid payloads`)];
  },
};
