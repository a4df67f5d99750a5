import { stringifyExact, LosslessNumber, type ExactJson } from '../../core/exact-json.js';
import { validateSchema, type SchemaIssue } from '../../core/schemas.js';
import type { Finding } from '../types.js';
import {
  describeIssues,
  isFinding,
  issueRules,
  pass,
  fail,
  preview,
  undecryptableCallback,
  type Check,
} from './check.js';
import { interfaceName } from '../../spec/callback-types.js';
import { callbacksOf, openCallback } from './callback-support.js';

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
 * The fields the interface itself names for a callback type (Events: requestUUID, the idempotency keys of
 * deposits and withdrawals); every other field, and its presence, is the toolkit's model (U-CB-FIELDS).
 */
function namedFields(type: unknown): readonly string[] {
  const common = ['type', 'requestUUID'];
  if (String(type) === '1') return [...common, 'txid', 'chain', 'symbol', 'toAddress'];
  if (String(type) === '3') return [...common, 'txid'];
  return common;
}

/** The field a schema issue is about: the missing property of a `required`, else the first path segment. */
function fieldOf(issue: SchemaIssue): string {
  const missing = /required property '([^']+)'/.exec(issue.message)?.[1];
  return missing ?? issue.path.split('/')[1] ?? '';
}

/**
 * The value's text for comparison: a JSON number and a decimal string with the same digits are one
 * amount (U-CB-FIELDS leaves the form open); other values compare as their text.
 */
function comparable(value: ExactJson | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value instanceof LosslessNumber) return value.value;
  return typeof value === 'string' ? value : stringifyExact(value);
}

/** `fields`: payload fields that must have exactly these values. */
type CallbackDecryptsParams = { fields?: Record<string, ExactJson> };

/**
 * `callback-decrypts`: each body decrypts with the merchant's public key to a valid payload of the
 * emitted type; `fields` compares fields exactly (digits kept), txid/txId and chain/chainName being
 * one field and a number equal to a decimal string with the same digits (U-CB-FIELDS).
 */
export const callbackDecryptsCheck: Check<CallbackDecryptsParams> = {
  id: 'callback-decrypts',
  title: 'callback decrypts with the public key',
  rules: ['CB-DECRYPT', 'CRYPTO-SAME'],
  needs: 'callbacks',
  params: {
    type: 'object',
    properties: {
      fields: {
        type: 'object',
        description:
          'payload fields compared exactly (digits kept; txid/txId and chain/chainName are one field; {{templates}} allowed)',
      },
    },
    required: [],
    additionalProperties: false,
  },
  run(ctx) {
    const collected = callbacksOf(ctx);
    if (isFinding(collected)) return [collected];
    const { callbacks, target } = collected;
    // A field of the toolkit's payload model that is missing or typed otherwise only warns (U-CB-FIELDS):
    // the interface names only requestUUID and the idempotency keys.
    let openPoint: Finding | undefined;
    for (const [i, callback] of callbacks.entries()) {
      const opened = openCallback(callback, target);
      if ('error' in opened) return [undecryptableCallback(i + 1, opened.error)];
      const payload = withInterfaceNames(opened.value);
      const issues = validateSchema('CallbackPayload', payload);
      const named = namedFields(payload.type);
      const hard = issues.filter((issue) => named.includes(fieldOf(issue)) || fieldOf(issue) === '');
      if (hard.length > 0)
        return [fail(`delivery ${i + 1} payload ${preview(opened.text)}: ${describeIssues(hard)}`, issueRules(hard))];
      // Judged by the expectation without `fields`: one warning per step, not one per compared field.
      if (issues.length > 0 && ctx.params.fields === undefined)
        openPoint ??= fail(
          `delivery ${i + 1} payload ${preview(opened.text)} differs from the toolkit's payload model (fields the interface does not name): ${describeIssues(issues)}`,
          ['U-CB-FIELDS'],
        );
      const type = ctx.step.emit?.type;
      if (type !== undefined && String(opened.value.type) !== String(type))
        return [fail(`delivery ${i + 1} has type ${String(opened.value.type)}, the event emitted was type ${type}`)];
      const fields = ctx.params.fields ?? {};
      for (const [field, want] of Object.entries(fields)) {
        const got = comparable(payload[interfaceName(field)]);
        const wanted = comparable(want);
        if (got !== wanted)
          return [
            fail(
              `delivery ${i + 1}: ${field} is ${got ?? 'absent'}, expected ${wanted} exactly${got !== undefined && wanted !== undefined && Number(got) === Number(wanted) ? ' (the digits were rounded: parsed as a binary float?)' : ''}`,
            ),
          ];
      }
    }
    return [openPoint ?? pass(`${callbacks.length} deliveries decrypt to valid payloads`)];
  },
};
