import { randomBytes } from 'node:crypto';
import { parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import {
  postCallback,
  readProbeAfter,
  type Exchange,
  type MerchantTarget,
  type ProbeMark,
  type StrangerKeys,
} from '../runner/api.js';
import { readAcknowledgement, type Acknowledgement } from '../wire/acknowledgement.js';
import { sealCallback as sealWireCallback, withRequestUUID } from '../wire/callback-delivery.js';

/** What the merchant properties share: the target, a stranger key pair, a per-run tag for unique event ids. */
export interface MerchantEnv {
  target: MerchantTarget;
  stranger: StrangerKeys;
  tag: string;
  events: number;
  /** Entries of the probe as last read: the next case's "before" (one probe read per case, not two). */
  probeSeen?: ProbeMark;
}

/** A new environment for one run against `target`. */
export function merchantEnv(target: MerchantTarget, stranger: StrangerKeys): MerchantEnv {
  return { target, stranger, tag: randomBytes(3).toString('base64url').slice(0, 4), events: 0 };
}

/** The fields that make an event itself (CB-ID-*): suffixed per sent event so earlier runs never make it a duplicate. */
const IDENTITY_FIELDS = ['trackingId', 'txid', 'txId', 'callBackId'] as const;

/**
 * The event as sent: its identity fields get a unique suffix of fixed width (the merchant
 * remembers every event it ever processed; a replay or an earlier run must not look like a
 * duplicate). A wrapped-contract twin shares the txid suffix of its deposit.
 */
export function uniqueEvent(
  env: MerchantEnv,
  payload: Record<string, ExactJson>,
  shared?: string,
): { payload: Record<string, ExactJson>; suffix: string } {
  env.events++;
  const suffix = shared ?? `~${env.tag}${(env.events % 36 ** 5).toString(36).padStart(5, '0')}`;
  const out = { ...payload };
  for (const field of IDENTITY_FIELDS)
    if (typeof out[field] === 'string') out[field] = `${out[field] as string}${suffix}`;
  return { payload: out, suffix };
}

/**
 * One delivery's answer as the service reads it (CB-ERRCODE), through the one definition of
 * "acknowledged" (src/wire/acknowledgement.ts): `ambiguous` (errCode 0 spelled `0.0`, or with
 * another HTTP status) is a reading of U-CB-RESPONSE, which the properties warn about.
 */
export function acknowledgementOf(exchange: Exchange): Acknowledgement {
  return readAcknowledgement(exchange.response);
}

/** Delivers a body (already sealed or mangled) as the service does: raw body, form content type, the merchant's key. */
export function deliverBody(env: MerchantEnv, body: string, plainText: string): Promise<Exchange> {
  return postCallback(env.target, body, plainText, env.target.apiKey);
}

/** Delivers one copy of an event: a fresh requestUUID (CB-UUID), encrypted with the merchant's private key. */
export async function deliverEvent(env: MerchantEnv, payload: Record<string, ExactJson>): Promise<Exchange> {
  const text = stringifyExact(withRequestUUID(payload));
  return deliverBody(env, sealCallback(env, text), text);
}

/** Encrypts a callback plaintext as the profile says (the service's half of the merchant's key pair). */
export function sealCallback(env: MerchantEnv, text: string): string {
  return sealWireCallback(text, env.target.privateKey, env.target.profile);
}

/**
 * The probe's entries added since the last call that are events of this run (undefined without a
 * probe). The first call reads the baseline; each later call reads once and remembers the length
 * for the next. An entry counts when one of its identity fields carries this run's suffix: what
 * others delivered meanwhile (the service's own callbacks in an embedded run, a parallel run) is
 * processed legitimately and is no business of the property.
 */
export async function probeSince(env: MerchantEnv): Promise<string[] | undefined> {
  // The first call pages to the end of the history and keeps nothing; each later call reads only what follows.
  const read = await readProbeAfter(env.target, env.probeSeen, { keep: env.probeSeen !== undefined });
  if (!read) return undefined;
  env.probeSeen = read.mark;
  return read.entries
    .map((entry) => parseExactJson(entry))
    .filter((entry) => isOurs(env, entry))
    .map((entry) => stringifyExact(entry));
}

/** Does a processed entry belong to an event of this run (an identity field with this run's suffix)? */
export function isOurs(env: MerchantEnv, entry: ExactJson): boolean {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return true;
  const record = entry as Record<string, ExactJson>;
  const marker = `~${env.tag}`;
  const identities = IDENTITY_FIELDS.filter((field) => typeof record[field] === 'string');
  // An entry without any identity field cannot be told apart: it counts (a merchant that stores garbage is judged on it).
  return identities.length === 0 || identities.some((field) => (record[field] as string).includes(marker));
}
