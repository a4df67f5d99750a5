import { randomBytes, randomUUID } from 'node:crypto';
import { LosslessNumber } from '../../src/core/exact-json.js';
import { sealJson } from '../../src/crypto/codec.js';
import { generateMerchantKeyPair } from '../../src/crypto/key-pair.js';
import { parseKey, type RsaPrivateKey, type RsaPublicKey } from '../../src/crypto/keys.js';

/** A fresh 1024-bit merchant key pair (the platform's default size). */
export function makeKeyPair(): {
  privateKey: RsaPrivateKey;
  publicKey: RsaPublicKey;
  pem: ReturnType<typeof generateMerchantKeyPair>;
} {
  const pem = generateMerchantKeyPair(1024);
  const privateKey = parseKey(pem.privatePem, { expect: 'private' }) as RsaPrivateKey;
  return { privateKey, publicKey: privateKey.publicKey, pem };
}

/** The amount the exactness tests look for, digit for digit. */
export const EXACT_AMOUNT = '12345678901234567890.123';

type Fields = Record<string, unknown>;

/** A deposit (type 1) payload; `requestUUID` is new on every call, like every real delivery. */
export function deposit(fields: Fields = {}): Fields {
  return {
    type: 1,
    requestUUID: randomUUID(),
    trackingId: `dep-${randomBytes(4).toString('hex')}`,
    tenantUserId: 'u-20931',
    business: 0,
    txid: randomBytes(32).toString('hex'),
    chain: 'TRON',
    symbol: 'USDT',
    toAddress: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
    fromAddress: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8',
    amount: new LosslessNumber(EXACT_AMOUNT),
    txIndex: 0,
    ...fields,
  };
}

/** A withdrawal (type 3) payload. */
export function withdrawal(fields: Fields = {}): Fields {
  return {
    type: 3,
    requestUUID: randomUUID(),
    trackingId: `wd-${randomBytes(4).toString('hex')}`,
    tenantUserId: 'u-20931',
    business: 0,
    txid: randomBytes(32).toString('hex'),
    callBackId: `cb-${randomBytes(4).toString('hex')}`,
    chain: 'TRON',
    symbol: 'USDT',
    toAddress: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
    amount: new LosslessNumber(EXACT_AMOUNT),
    ...fields,
  };
}

/** The same event delivered again: identical but for a fresh requestUUID (CB-UUID). */
export function redelivery(payload: Fields): Fields {
  return { ...payload, requestUUID: randomUUID() };
}

/** Encrypts a callback as the service does (private key, default profile). */
export function seal(payload: Fields | string, privateKey: RsaPrivateKey): string {
  return sealJson(payload, 'callback', privateKey);
}

/**
 * A payload whose ciphertext's Base64 holds '+', '/' and '=' (the characters a form parser or a
 * URL-safe encoder mangles), found by varying the trackingId's length and text.
 */
export function trickyPayload(
  make: (trackingId: string) => Fields,
  privateKey: RsaPrivateKey,
): { payload: Fields; body: string } {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const trackingId = `t-${randomBytes(1 + (attempt % 90)).toString('hex')}`;
    const payload = make(trackingId);
    const body = seal(payload, privateKey);
    if (body.includes('+') && body.includes('/') && body.endsWith('=')) return { payload, body };
  }
  throw new Error('no ciphertext with +, / and = in 1000 attempts');
}

/** What the merchant answered. */
export interface Delivered {
  status: number;
  json: unknown;
  text: string;
}

/** Delivers a raw callback body the way the service does (form content type, X-API-KEY). */
export async function deliver(
  url: string,
  body: string | Buffer,
  options: { apiKey?: string; contentType?: string } = {},
): Promise<Delivered> {
  const headers: Record<string, string> = {
    'content-type': options.contentType ?? 'application/x-www-form-urlencoded',
  };
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

/** The probe's raw text and its entries' texts, split without parsing numbers. */
export async function probe(url: string): Promise<{ text: string; count: number }> {
  const response = await fetch(url);
  const text = await response.text();
  return { text, count: (JSON.parse(text) as { processed: unknown[] }).processed.length };
}
