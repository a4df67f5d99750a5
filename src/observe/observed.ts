/**
 * What the judge needs of an observed exchange, read once: the raw bodies, the keys to open them
 * with (per the crypto profile's direction), and the evidence a report shows (secrets scrubbed).
 */
import { parseExactJson, type ExactJson } from '../core/exact-json.js';
import { DEFAULT_PROFILE, type CryptoProfile, type Direction } from '../core/profile.js';
import { createScrubber, fingerprint, type Scrubber } from '../secrets/scrub.js';
import { halfFor, openJson, type OpenedJson } from '../crypto/codec.js';
import { parseKey, publicHalf, type RsaKey, type RsaPrivateKey, type RsaPublicKey } from '../crypto/keys.js';
import { preview } from '../runner/api.js';
import { describeCryptoFailure } from '../wire/crypto-wording.js';
import { FINGERPRINT, SECRET_HEADERS } from './capture.js';
import type { ObserveKeys, ObservedExchange, ObservedMessage } from './exchange.js';

/** The keys the judge holds, parsed, with the profile that says which half opens which direction. */
export interface JudgeKeys {
  publicKey?: RsaPublicKey;
  privateKey?: RsaPrivateKey;
  apiKey?: string;
  profile: CryptoProfile;
  scrubber: Scrubber;
}

/** Parses the PEM texts once; a bad key is the caller's error (thrown, one line). */
export function judgeKeys(keys: ObserveKeys, profile: CryptoProfile = DEFAULT_PROFILE): JudgeKeys {
  const privateKey = keys.privateKeyPem
    ? (parseKey(keys.privateKeyPem, { expect: 'private', source: 'private key' }) as RsaPrivateKey)
    : undefined;
  const publicKey = keys.publicKeyPem
    ? publicHalf(parseKey(keys.publicKeyPem, { source: 'public key' }))
    : privateKey?.publicKey;
  const secrets = [
    ...(keys.apiKey ? [{ kind: 'ak' as const, value: keys.apiKey }] : []),
    ...(keys.privateKeyPem ? [{ kind: 'pk' as const, value: keys.privateKeyPem }] : []),
  ];
  return {
    ...(publicKey ? { publicKey } : {}),
    ...(privateKey ? { privateKey } : {}),
    ...(keys.apiKey ? { apiKey: keys.apiKey } : {}),
    profile,
    scrubber: createScrubber(secrets),
  };
}

/** The key that opens data travelling in `direction`, or undefined when the judge does not hold that half. */
export function openingKey(keys: JudgeKeys, direction: Direction): RsaKey | undefined {
  return halfFor(direction, 'decrypt', keys.profile) === 'public' ? keys.publicKey : keys.privateKey;
}

/** Opens Base64 ciphertext for `direction`: the opened JSON, the failure (worded with its reason), or `no-key`. */
export function openWith(
  keys: JudgeKeys,
  direction: Direction,
  base64: string,
): { opened: OpenedJson } | { error: string } | 'no-key' {
  const key = openingKey(keys, direction);
  if (!key) return 'no-key';
  try {
    return { opened: openJson(base64, direction, key, { profile: keys.profile }) };
  } catch (error) {
    return { error: describeCryptoFailure(error) };
  }
}

/** The raw body of a message as bytes. */
export function bodyBytes(message: ObservedMessage): Buffer {
  return Buffer.from(message.bodyBase64, 'base64');
}

/** The raw body as text: Latin-1 keeps every byte (Base64 and form bodies are ASCII), UTF-8 for JSON. */
export function bodyText(message: ObservedMessage, encoding: 'latin1' | 'utf8' = 'utf8'): string {
  return bodyBytes(message).toString(encoding);
}

/** The body parsed as exact JSON, or undefined when it is not JSON. */
export function bodyJson(message: ObservedMessage): ExactJson | undefined {
  const text = bodyText(message).trim();
  if (text === '') return undefined;
  try {
    return parseExactJson(text);
  } catch {
    return undefined;
  }
}

/** Is the key header the configured API key? A capture holds its fingerprint instead, which counts as the key. */
export function isConfiguredKey(keys: JudgeKeys, header: string | undefined): boolean | undefined {
  if (keys.apiKey === undefined) return undefined;
  if (header === undefined) return false;
  return header === keys.apiKey || header === fingerprint(keys.apiKey, 'ak');
}

/** Headers for evidence: credentials shown by their fingerprint, never their value. */
function shownHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const kind = SECRET_HEADERS[name];
    out[name] = kind && !FINGERPRINT.test(value) ? fingerprint(value, kind) : value;
  }
  return out;
}

/**
 * The evidence of a result about one exchange: seq, path, status, the bodies as text (short), and
 * what the judge opened (plaintext), every secret scrubbed.
 */
export function evidenceOf(
  keys: JudgeKeys,
  exchange: ObservedExchange,
  opened: { request?: string; response?: string } = {},
): Record<string, unknown> {
  const response = exchange.response;
  const evidence = {
    seq: exchange.seq,
    kind: exchange.kind,
    direction: exchange.direction,
    method: exchange.request.method,
    path: exchange.request.path,
    status: response?.status ?? null,
    startedAt: new Date(exchange.startedAt).toISOString(),
    request: {
      headers: shownHeaders(exchange.request.headers),
      body: preview(bodyText(exchange.request, 'latin1'), 600),
      ...(opened.request === undefined ? {} : { plaintext: preview(opened.request, 600) }),
    },
    response: response
      ? {
          headers: shownHeaders(response.headers),
          body: preview(bodyText(response), 600),
          ...(opened.response === undefined ? {} : { plaintext: preview(opened.response, 600) }),
        }
      : null,
    ...(exchange.upstreamError ? { upstreamError: exchange.upstreamError } : {}),
  };
  return keys.scrubber.value(evidence);
}
